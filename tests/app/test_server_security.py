"""What the server's configuration protects (issue 15, 'Also'): a real Streamlit server
with the repository's ``.streamlit/config.toml``, spoken to over HTTP and WebSocket."""
from __future__ import annotations

import os
import socket
import urllib.error
import urllib.request

import pytest
import tomllib

from tests.helpers import REPO
from tests.helpers.servers import free_port, streamlit_server


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    port = free_port()
    log_path = tmp_path_factory.mktemp("server") / "streamlit.log"
    with streamlit_server(port, dict(os.environ, DROPEDGE_TORCH_THREADS="1"), log_path):
        yield port


def _open(port: int, host: str, origin: str | None) -> str:
    """The status line of a WebSocket handshake with these Host and Origin headers (a raw
    socket: a client library would set Host from the address)."""
    lines = ["GET /_stcore/stream HTTP/1.1", f"Host: {host}:{port}", "Upgrade: websocket",
             "Connection: Upgrade", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
             "Sec-WebSocket-Version: 13", "Sec-WebSocket-Protocol: streamlit"]
    if origin:
        lines.append(f"Origin: {origin}")
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        return sock.recv(4096).split(b"\r\n", 1)[0].decode()


def test_dns_rebinding_host_is_refused(server):
    ok = _open(server, "localhost", f"http://localhost:{server}")
    assert " 101 " in ok, ok
    rebound = _open(server, "evil.example", f"http://evil.example:{server}")
    assert " 101 " not in rebound and " 40" in rebound, rebound


def test_cross_origin_page_cannot_open_the_socket(server):
    other = _open(server, "localhost", "http://evil.example")
    assert " 101 " not in other and " 40" in other, other


def test_upload_without_the_xsrf_token_is_refused(server):
    req = urllib.request.Request(f"http://localhost:{server}/_stcore/upload_file/s/f", method="PUT",
                                 data=b"0,1\n", headers={"Content-Type": "text/csv"})
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(req, timeout=10)
    assert info.value.code in (400, 403)


def test_config_keeps_paths_out_of_the_browser():
    cfg = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    assert cfg["client"]["showErrorDetails"] in ("type", "none")
    assert cfg["server"]["address"] == "localhost"


def test_config_skips_the_full_collection_after_every_script_run():
    """Streamlit's default ``gc.collect(2)`` after each script run (every fragment poll
    included) costs ~150-240 ms with torch in the heap and was most of a class server's
    CPU (docs/PERFORMANCE.md, ``bench/bench_server.py``): the app's config turns it off."""
    cfg = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    assert cfg["runner"]["postScriptGC"] is False
