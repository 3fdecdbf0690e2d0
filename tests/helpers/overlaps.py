"""Overlaps on a drawn page, read from the browser's element boxes (Playwright).

:func:`overlaps` asks the page for the boxes of what a reader must see whole — widget
labels, buttons, headings and paragraphs, captions, metrics, slider values and, inside
every Plotly chart, its title, axis titles, annotations, legend, animation slider and
play buttons — and returns every pair of them that cover each other (neither inside the
other in the DOM), every text cut by its box (``overflow`` hidden and wider content),
and every legend drawn over a data point. Used by the browser walk
(``tests/browser/test_browser_layout.py``) and the screenshot script
(``docs/tools/screenshots.py``), at 1280x800 and 1920x1080.
"""
from __future__ import annotations

#: The viewports every page is checked at.
VIEWPORTS: tuple[tuple[int, int], ...] = ((1280, 800), (1920, 1080))
#: Pixels two boxes may share before they count as overlapping (borders, antialiasing).
SLACK = 2

_JS = r"""
slack => {
  const page = [
    '[data-testid=stWidgetLabel]', '[data-testid=stMain] button', '[data-testid=stSidebar] button',
    '[data-testid=stHeading]', '[data-testid=stMarkdownContainer] > p',
    '[data-testid=stMarkdownContainer] > ul', '[data-testid=stCaptionContainer]',
    '[data-testid=stMetricLabel]', '[data-testid=stMetricValue]', '[data-testid=stSliderThumbValue]',
    '[data-testid=stSliderTickBarMin]', '[data-testid=stSliderTickBarMax]',
    '[data-testid=stAlertContainer]', '[data-testid=stExpander] summary', '[data-testid=stTab]',
  ];
  const inChart = ['.gtitle', '.g-xtitle', '.g-ytitle', '.annotation', '.legend', '.slider-group',
                   '.updatemenu-button', '.colorbar'];
  const visible = e => {
    const r = e.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) return null;
    for (let x = e; x && x.nodeType === 1; x = x.parentElement) {
      const s = getComputedStyle(x);
      if (s.display === 'none' || s.visibility === 'hidden' || s.opacity === '0') return null;
      if (x.tagName === 'DETAILS' && !x.open && x !== e && !e.closest('summary')) return null;
    }
    return r;
  };
  const name = e => {
    const tid = e.getAttribute('data-testid') || e.getAttribute('class') || e.tagName.toLowerCase();
    const text = (e.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 50);
    return `${tid.split(' ')[0]} "${text}"`;
  };
  // a text's box is its glyphs' (the union of its text's client rects, less a quarter of
  // their height above and below: the font's leading), not its line box: a label's line
  // height reaches into the slider value under it without covering it
  const textBox = e => {
    const range = document.createRange();
    range.selectNodeContents(e);
    const rects = [...range.getClientRects()].filter(r => r.width >= 1 && r.height >= 1);
    if (!rects.length) return null;
    return {left: Math.min(...rects.map(r => r.left)), right: Math.max(...rects.map(r => r.right)),
            top: Math.min(...rects.map(r => r.top + 0.25 * r.height)),
            bottom: Math.max(...rects.map(r => r.bottom - 0.25 * r.height))};
  };
  const items = [];
  const seen = new Set();
  const add = (e, group) => {
    if (seen.has(e)) return;
    seen.add(e);
    const r = visible(e);
    if (!r) return;
    const text = group === 'page' && e.tagName !== 'BUTTON' && (e.textContent || '').trim();
    items.push({e, r: (text && textBox(e)) || r, group});
  };
  const found = [];
  for (const sel of page) document.querySelectorAll(sel).forEach(e => found.push(e));
  // the outermost of nested matches only (a label's paragraph is the label)
  found.filter(e => !found.some(o => o !== e && o.contains(e))).forEach(e => add(e, 'page'));
  document.querySelectorAll('[data-testid=stPlotlyChart] .js-plotly-plot').forEach((chart, i) => {
    for (const sel of inChart) chart.querySelectorAll(sel).forEach(e => add(e, `chart${i}`));
  });
  const out = [];
  for (let i = 0; i < items.length; i++) {
    for (let j = i + 1; j < items.length; j++) {
      const a = items[i], b = items[j];
      if (a.e.contains(b.e) || b.e.contains(a.e)) continue;
      const w = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
      const h = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
      if (w > slack && h > slack)
        out.push(`overlap: ${name(a.e)} and ${name(b.e)} share ${Math.round(w)}x${Math.round(h)} px`);
    }
  }
  for (const {e, group} of items) {  // a text cut by its own box (ellipsis or hidden overflow)
    if (group !== 'page') continue;
    const up = [];  // the element's own boxes up to its Streamlit element (a label's wrapper cuts it)
    for (let x = e.parentElement; x && up.length < 4 && !x.matches('[data-testid=stElementContainer]');
         x = x.parentElement) up.push(x);
    for (const x of [e, ...e.querySelectorAll('*'), ...up]) {
      if (x.closest('.katex-mathml')) continue;  // KaTeX's copy for screen readers, hidden on purpose
      const s = getComputedStyle(x);
      if ((s.overflow === 'hidden' || s.overflowX === 'hidden' || s.textOverflow === 'ellipsis')
          && x.scrollWidth > x.clientWidth + slack && (x.textContent || '').trim())
        { out.push(`clipped: ${name(e)} (${x.scrollWidth} px of text in ${x.clientWidth} px)`); break; }
    }
  }
  document.querySelectorAll('[data-testid=stPlotlyChart] .js-plotly-plot').forEach(chart => {
    const legend = chart.querySelector('.legend');
    const box = legend && visible(legend);
    if (!box) return;
    const bar = legend.querySelector('.scrollbar');
    if (bar && bar.getBoundingClientRect().height > 0)
      out.push(`legend scrolls: ${name(legend)} (some entries hidden)`);
    // the plot areas: a point outside them is clipped away by Plotly, not drawn
    const areas = [...chart.querySelectorAll('.draglayer .nsewdrag')].map(a => a.getBoundingClientRect());
    const inside = (x, y, b) => x > b.left && x < b.right && y > b.top && y < b.bottom;
    for (const p of chart.querySelectorAll('.scatterlayer .point, .barlayer .point')) {
      const r = p.getBoundingClientRect();
      const x = r.left + r.width / 2, y = r.top + r.height / 2;
      if (r.width > 0 && inside(x, y, box) && areas.some(a => inside(x, y, a))) {
        out.push(`legend over data: ${name(legend)} covers a point at (${Math.round(x)}, ${Math.round(y)})`);
        break;
      }
    }
  });
  return out;
}
"""


def overlaps(pg) -> list[str]:
    """Every overlap, clipped text and legend over data on the page ``pg`` as drawn now
    (one line each; empty when the page is clean)."""
    return pg.evaluate(_JS, SLACK)
