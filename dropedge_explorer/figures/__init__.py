"""Figure builders: tables in, :class:`plotly.graph_objects.Figure` out.

Pure and deterministic (no Streamlit, no randomness, no training), usable from a
notebook, the app and the tests alike. Conventions every builder follows:

* one colour per sampler everywhere: :data:`~.style.SAMPLER_COLORS` (:func:`~.style.sampler_color`
  for names outside the paper's seven);
* axis titles say the quantity and its unit ("edges kept (count)", "test accuracy (%)");
* hover text says what a point is (sampler, layer or depth, run, value);
* layer ``l = 0`` is the input (bottom) layer, as in :mod:`dropedge_core.samplers`;
* graphs are drawn with a handful of traces — kept edges, dropped edges (kernel-weight
  bins for weighted samplers), one per node class — never one trace per edge.

Modules: :mod:`.style` (colours, labels, layout), :mod:`.graph` (a graph's sampled
layers), :mod:`.men` (MEN), :mod:`.training` (runs), :mod:`.study` (depth study, tuning),
:mod:`.teaching` (the teaching views). The builders are importable from here.
"""
from dropedge_explorer.figures.graph import (
                                         intra_inter_share,
                                         keep_counts_bar,
                                         layer_edges,
                                         layer_edges_animation,
                                         nesting_heatmap,
)
from dropedge_explorer.figures.men import (
                                         edge_number_curves,
                                         men_table_compare,
                                         men_vs_depth,
                                         over_smoothing_demo,
)
from dropedge_explorer.figures.study import accuracy_vs_depth, tuning_history, tuning_surface
from dropedge_explorer.figures.style import (
                                         BACKBONE_LABELS,
                                         CLASS_COLORS,
                                         SAMPLER_COLORS,
                                         SAMPLER_LABELS,
                                         WEIGHT_COLORS,
                                         run_styles,
                                         sampler_color,
                                         sampler_label,
                                         shade,
)
from dropedge_explorer.figures.training import (
                                         diagnostic_label,
                                         diagnostics_heatmap,
                                         layer_distance_curves,
                                         men_over_training,
                                         training_curves,
)

__all__ = ["BACKBONE_LABELS", "CLASS_COLORS", "SAMPLER_COLORS", "SAMPLER_LABELS", "WEIGHT_COLORS",
           "accuracy_vs_depth", "diagnostic_label", "diagnostics_heatmap", "edge_number_curves",
           "intra_inter_share", "keep_counts_bar", "layer_distance_curves", "layer_edges",
           "layer_edges_animation", "men_over_training", "men_table_compare", "men_vs_depth",
           "nesting_heatmap", "over_smoothing_demo", "run_styles", "sampler_color", "sampler_label",
           "shade", "training_curves", "tuning_history", "tuning_surface"]
