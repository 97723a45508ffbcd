"""Downloading UCR datasets by name: a local HTTP server stands in for the archive's site."""

import functools
import hashlib
import http.server
import io
import os
import socket
import threading
import time
import zipfile

import numpy as np
import pytest

from rntk.datasets import DownloadError, _download, fetch_ucr, load_ucr

XTR = np.array([[0.5, -1.25, 2.0, 3.0], [1.0, 3.5, -0.75, 0.0], [0.25, 0.5, 1.0, 1.5]])
YTR = [1, 2, 1]
XTE = np.array([[2.0, 1.0, 0.0, -1.0], [0.125, 0.25, 0.375, 0.5]])
YTE = [2, 1]


def _tsv(X, y):
    return "".join("\t".join([str(lab)] + [repr(float(v)) for v in row]) + "\n"
                   for row, lab in zip(X, y))


def _ts(X, y):
    head = "@problemName Toy\n@univariate true\n@equalLength true\n@classLabel true 1 2\n@data\n"
    return head + "".join(",".join(repr(float(v)) for v in row) + f":{lab}\n"
                          for row, lab in zip(X, y))


def _zip(files):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, text in files.items():
            zf.writestr(path, text)
    return buf.getvalue()


TOY_FLAT = _zip({"Toy_TRAIN.tsv": _tsv(XTR, YTR), "Toy_TEST.tsv": _tsv(XTE, YTE)})


class _Server:
    def __init__(self, root):
        self.root, self.requests = root, []
        outer = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def do_GET(self):
                outer.requests.append(self.path)
                super().do_GET()

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,),
                                       daemon=True)
        self.thread.start()

    def put(self, name, data):
        (self.root / name).write_bytes(data)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("RNTK_CACHE", str(folder))
    monkeypatch.delenv("RNTK_DATA", raising=False)
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy",
                "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setattr(_download, "_TIMEOUT", 2.0)
    return folder


@pytest.fixture
def server(tmp_path, cache, monkeypatch):
    root = tmp_path / "site"
    root.mkdir()
    srv = _Server(root)
    monkeypatch.setenv("RNTK_UCR_URL", srv.url + "/")
    yield srv
    srv.close()


def _leftovers(cache):
    """Everything in the cache folder (temporary files included)."""
    return sorted(p.name for p in cache.iterdir()) if cache.exists() else []


@pytest.mark.parametrize("files", [
    {"Toy_TRAIN.tsv": _tsv(XTR, YTR), "Toy_TEST.tsv": _tsv(XTE, YTE)},
    {"Toy/Toy_TRAIN.tsv": _tsv(XTR, YTR), "Toy/Toy_TEST.tsv": _tsv(XTE, YTE),
     "Toy/README.txt": "x"},
    {"Toy_TRAIN.ts": _ts(XTR, YTR), "Toy_TEST.ts": _ts(XTE, YTE)},  # the aeon zips
], ids=["flat-tsv", "folder-tsv", "flat-ts"])
def test_download_then_cache(server, cache, files):
    server.put("Toy.zip", _zip(files))
    X_train, y_train, X_test, y_test = load_ucr("Toy")
    np.testing.assert_array_equal(X_train, XTR)
    np.testing.assert_array_equal(X_test, XTE)
    assert y_train.tolist() == YTR and y_test.tolist() == YTE
    assert server.requests == ["/Toy.zip"]
    ext = ".ts" if "Toy_TRAIN.ts" in files else ".tsv"
    assert _leftovers(cache) == ["Toy"]  # no temporary file left
    assert sorted(p.name for p in (cache / "Toy").iterdir()) == [f"Toy_TEST{ext}",
                                                                  f"Toy_TRAIN{ext}"]
    # the second load reads the cache: no request, even with download=False
    X, y = load_ucr("Toy", split="test", download=False)
    np.testing.assert_array_equal(X, XTE)
    assert server.requests == ["/Toy.zip"]
    assert fetch_ucr("Toy") == cache / "Toy" and len(server.requests) == 1
    # the cache folder is a data_home in the UCR layout
    np.testing.assert_array_equal(load_ucr("Toy", "train", data_home=cache)[0], XTR)


def test_fetch_ucr_arguments(server, tmp_path, monkeypatch):
    monkeypatch.delenv("RNTK_UCR_URL")
    server.put("Toy.zip", TOY_FLAT)
    folder = fetch_ucr("Toy", cache_dir=tmp_path / "elsewhere", url=server.url)
    assert folder == tmp_path / "elsewhere" / "Toy"
    assert (folder / "Toy_TRAIN.tsv").read_text() == _tsv(XTR, YTR)


def test_default_cache_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("RNTK_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert _download._cache_dir() == tmp_path / "rntk" / "ucr"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert str(_download._cache_dir()).endswith(os.path.join(".cache", "rntk", "ucr"))
    monkeypatch.setenv("RNTK_CACHE", str(tmp_path / "c"))
    assert _download._cache_dir() == tmp_path / "c"


def test_corrupt_zip_leaves_nothing(server, cache):
    server.put("Toy.zip", np.random.default_rng(0).bytes(5000))
    with pytest.raises(ValueError, match=r"could not download Toy from http://127\.0\.0\.1:\d+"
                                         r"/Toy\.zip: the file is not a zip archive"):
        load_ucr("Toy")
    assert _leftovers(cache) == []
    # an HTML page (what the site serves for some missing files) is named as such
    server.put("Toy.zip", b"<!DOCTYPE html><html><body>Not here</body></html>")
    with pytest.raises(DownloadError, match="an HTML page"):
        load_ucr("Toy")
    assert _leftovers(cache) == []


def test_truncated_zip_and_bad_crc(server, cache):
    server.put("Toy.zip", TOY_FLAT[: len(TOY_FLAT) // 2])
    with pytest.raises(DownloadError, match="not a zip archive"):
        load_ucr("Toy")
    # a flipped byte inside a member: the zip opens, the CRC check catches it
    data = bytearray(_zip({"Toy_TRAIN.tsv": _tsv(XTR, YTR) * 50, "Toy_TEST.tsv": "1\t2\n"}))
    data[60] ^= 0xFF
    server.put("Toy.zip", bytes(data))
    with pytest.raises(DownloadError, match="Toy_TRAIN.tsv in the zip cannot be read"):
        load_ucr("Toy")
    assert _leftovers(cache) == []


def test_zip_without_the_files(server, cache):
    server.put("Toy.zip", _zip({"Other_TRAIN.tsv": "1\t2\n", "Toy_TEST.tsv": "1\t2\n"}))
    with pytest.raises(DownloadError, match=r"holds no Toy_TRAIN.tsv and Toy_TEST.tsv \(nor "
                                            r"\.ts\) files; it holds: Other_TRAIN.tsv"):
        load_ucr("Toy")
    assert _leftovers(cache) == []


def test_http_404(server, cache):
    with pytest.raises(DownloadError, match=r"could not download Toy from .*/Toy\.zip: HTTP "
                                            r"error 404 .*check the name \(list at https://"
                                            r".*\) or your connection, or pass data_home=") as e:
        load_ucr("Toy")
    assert isinstance(e.value, OSError) and isinstance(e.value, ValueError)
    assert _leftovers(cache) == []


def test_known_checksum(server, cache, monkeypatch):
    server.put("Toy.zip", TOY_FLAT)
    monkeypatch.setitem(_download._SHA256, "Toy", "0" * 64)
    with pytest.raises(DownloadError, match="SHA-256 mismatch"):
        load_ucr("Toy")
    assert _leftovers(cache) == []
    monkeypatch.setitem(_download._SHA256, "Toy", hashlib.sha256(TOY_FLAT).hexdigest())
    assert load_ucr("Toy", "train")[0].shape == (3, 4)


def test_download_false(server, cache):
    server.put("Toy.zip", TOY_FLAT)
    with pytest.raises(ValueError, match=r"unknown UCR dataset 'Toy'\. Available .*bundled: "
                                         r"Coffee.*download=True \(the default\) fetches it"):
        load_ucr("Toy", download=False)
    assert server.requests == [] and _leftovers(cache) == []


def test_bad_names_never_reach_the_network(server, cache):
    for name in ("../Toy", "a/b", "a\\b", "..", ".hidden", "To y", "x" * 101):
        with pytest.raises(ValueError, match="not a valid dataset name"):
            load_ucr(name)
        with pytest.raises(ValueError, match="not a valid dataset name"):
            fetch_ucr(name)
    with pytest.raises(ValueError, match="dataset name"):
        load_ucr("")
    with pytest.raises(TypeError):
        load_ucr(None)
    with pytest.raises(TypeError):
        fetch_ucr(None)
    assert server.requests == [] and _leftovers(cache) == []


def test_unlisted_names_stay_offline_with_the_default_site(cache, monkeypatch):
    monkeypatch.delenv("RNTK_UCR_URL", raising=False)

    def no_network(*args, **kwargs):
        raise AssertionError("the network was used")

    monkeypatch.setattr(_download.urllib.request, "urlopen", no_network)
    with pytest.raises(ValueError, match=r"'ECG500' is not a dataset of the UCR/UEA archive "
                                         r"\(did you mean ECG5000.*fetch_ucr\('ECG500'\)"):
        load_ucr("ECG500")
    with pytest.raises(ValueError, match="unknown UCR dataset 'Nope'.*not a dataset"):
        load_ucr("Nope", download=False)
    with pytest.raises(ValueError, match=r"download=True \(the default\) fetches it from "
                                         r"https://www\.timeseriesclassification\.com/aeon-"
                                         r"toolkit/ECG5000\.zip"):
        load_ucr("ECG5000", download=False)
    # bundled datasets never touch the network
    assert load_ucr("Coffee", "train")[0].shape == (28, 286)


def test_server_down_is_quick(cache, monkeypatch):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("RNTK_UCR_URL", f"http://127.0.0.1:{port}")
    t0 = time.perf_counter()
    with pytest.raises(OSError, match=r"could not download Toy from http://127\.0\.0\.1:\d+/"
                                      r"Toy\.zip: .*refused.*or your connection"):
        load_ucr("Toy")
    assert time.perf_counter() - t0 < 2.0
    assert _leftovers(cache) == []


def test_timeout(cache, monkeypatch):
    with socket.socket() as s:  # accepts connections (backlog), never answers
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        url = f"http://127.0.0.1:{s.getsockname()[1]}"
        t0 = time.perf_counter()
        with pytest.raises(DownloadError, match=r"no answer within 0\.3 s \(timed out\)"):
            fetch_ucr("Toy", url=url, timeout=0.3)
        assert time.perf_counter() - t0 < 2.0
    assert _leftovers(cache) == []


def test_truncated_transfer(cache, monkeypatch):
    """The server announces more bytes than it sends, then closes the connection."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)

        def serve():
            conn, _ = s.accept()
            with conn:
                conn.recv(4096)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(TOY_FLAT)
                             + TOY_FLAT[:100])

        t = threading.Thread(target=serve, daemon=True)
        t.start()
        with pytest.raises(DownloadError, match="incomplete download|cut"):
            fetch_ucr("Toy", url=f"http://127.0.0.1:{s.getsockname()[1]}")
        t.join(2)
    assert _leftovers(cache) == []


def test_stale_incomplete_cache_folder_is_replaced(server, cache):
    (cache / "Toy").mkdir(parents=True)
    (cache / "Toy" / "Toy_TRAIN.tsv").write_text("1\t2\n")  # no TEST file
    server.put("Toy.zip", TOY_FLAT)
    np.testing.assert_array_equal(load_ucr("Toy", "test")[0], XTE)
    assert server.requests == ["/Toy.zip"]


def test_install_keeps_the_users_files_in_an_incomplete_folder(server, cache):
    """A folder lacking a part gets the downloaded files; nothing else there is deleted."""
    folder = cache / "Toy"
    folder.mkdir(parents=True)
    (folder / "Toy_TRAIN.tsv").write_text("1\t2\n")  # no TEST file
    (folder / "notes.txt").write_text("mine")
    (folder / "sub").mkdir()
    (folder / "sub" / "more.txt").write_text("mine too")
    server.put("Toy.zip", TOY_FLAT)
    X_train, _, X_test, _ = load_ucr("Toy")
    np.testing.assert_array_equal(X_train, XTR)
    np.testing.assert_array_equal(X_test, XTE)
    assert (folder / "notes.txt").read_text() == "mine"
    assert (folder / "sub" / "more.txt").read_text() == "mine too"
    assert _leftovers(cache) == ["Toy"]  # no temporary file left


def test_a_file_in_the_way_is_not_deleted(server, cache):
    cache.mkdir(parents=True)
    (cache / "Toy").write_text("mine")
    server.put("Toy.zip", TOY_FLAT)
    with pytest.raises(DownloadError, match="in the way"):
        load_ucr("Toy")
    assert (cache / "Toy").read_text() == "mine"
    assert _leftovers(cache) == ["Toy"]


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_installed_folder_has_the_umask_mode(server, cache):
    server.put("Toy.zip", TOY_FLAT)
    old = os.umask(0o022)
    try:
        load_ucr("Toy")
    finally:
        os.umask(old)
    assert (cache / "Toy").stat().st_mode & 0o777 == 0o755  # not mkdtemp's 0700
    for f in (cache / "Toy").iterdir():
        assert f.stat().st_mode & 0o777 == 0o644
