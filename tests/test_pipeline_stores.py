"""The stores: owner-only confidential files, and a release replaced only whole."""
import stat

import pandas as pd
import pytest

from resources import ConfidentialStore, ReleaseStore


def test_confidential_store_creates_owner_only_folders_and_files(tmp_path):
    store = ConfidentialStore(root=str(tmp_path / "conf"))
    path = store.write_table(pd.DataFrame({"a": [1, 2]}), "s", "w1", "candidate/t.csv")
    store.write_json({"k": 1}, "s", "w1", "input.json")
    for folder in (tmp_path / "conf", tmp_path / "conf" / "s", tmp_path / "conf" / "s" / "w1", path.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for file in (path, tmp_path / "conf" / "s" / "w1" / "input.json"):
        assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert store.read_json("s", "w1", "input.json") == {"k": 1}


def test_publish_swaps_the_whole_folder_and_a_failed_publish_keeps_the_previous_release(tmp_path):
    release = ReleaseStore(root=str(tmp_path / "release"))
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.csv").write_text("x\n1\n")
    (src / "r.html").write_text("<p>one</p>")
    folder = release.publish("s", "w1", {"a.csv": src / "a.csv", "report/r.html": src / "r.html"})
    assert (folder / "report" / "r.html").read_text() == "<p>one</p>"

    (src / "a.csv").write_text("x\n2\n")
    with pytest.raises(FileNotFoundError):
        release.publish("s", "w1", {"a.csv": src / "a.csv", "report/r.html": src / "missing.html"})
    assert (folder / "a.csv").read_text() == "x\n1\n"
    assert sorted(p.name for p in folder.parent.iterdir()) == ["w1"]   # no staging left

    release.publish("s", "w1", {"a.csv": src / "a.csv"})
    assert sorted(p.name for p in folder.rglob("*")) == ["a.csv"] and (folder / "a.csv").read_text() == "x\n2\n"
    assert sorted(p.name for p in folder.parent.iterdir()) == ["w1"]
