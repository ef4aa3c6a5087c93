"""Configurations and stop lists found by name (sparktc.packaged), from any directory; a file's path still wins."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO, shared_data

from sparktc import packaged
from sparktc.errors import ConfigError
from sparktc.experiment.config import load_config
from sparktc.features.text import parse_stop_list, stop_words_of

REUTERS = ["corpus.format=reuters21578", f"corpus.path={shared_data('reuters21578')}"]


def test_a_packaged_configuration_is_found_by_name_from_any_directory(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no conf/ here
    by_name = load_config("reuters21578", REUTERS)
    assert by_name == load_config(str(REPO / "conf" / "reuters21578.toml"), REUTERS)
    assert by_name.tokenize.stop_list == "smart" and by_name.corpus.category_set == "R90"
    assert set(packaged.configurations()) == {path.stem for path in (REPO / "conf").glob("*.toml")}


def test_a_file_of_that_name_is_read_as_a_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "synthetic").write_text('[corpus]\nformat = "synthetic"\n'
                                        '[synthesize]\ndocuments = 1234\ntrain_documents = 1000\n')
    assert load_config("synthetic").synthesize.documents == 1234
    assert load_config(None, ["corpus.format=synthetic"]).synthesize.documents != 1234


def test_an_unknown_name_is_refused_with_the_packaged_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as error:
        load_config("reuters")
    names = ", ".join(sorted(path.stem for path in (REPO / "conf").glob("*.toml")))
    assert str(error.value) == ("--config reuters: no such file, nor a packaged configuration; give a TOML file's "
                                f"path or one of {names}")


def test_the_smart_stop_list_is_packaged_as_the_shared_file() -> None:
    shared = shared_data("stopwords", "smart_english.stop")
    assert (REPO / "conf" / "stopwords" / "smart_english.stop").read_bytes() == shared.read_bytes()
    unread = lambda path: pytest.fail(f"{path} read as a file")  # noqa: E731
    assert stop_words_of("smart", unread) == parse_stop_list(shared.read_text()) and len(parse_stop_list(
        shared.read_text())) == 570


def test_the_stop_list_name_stays_a_name_and_a_file_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert load_config(None, [*REUTERS, "tokenize.stop_list=smart"]).tokenize.stop_list == "smart"
    (tmp_path / "smart").write_text("the\n")
    assert load_config(None, [*REUTERS, "tokenize.stop_list=smart"]).tokenize.stop_list == str(tmp_path / "smart")
    with pytest.raises(ConfigError) as error:
        load_config(None, [*REUTERS, "tokenize.stop_list=smart.stop"])
    assert str(error.value) == ("tokenize.stop_list = 'smart.stop': no such file or directory; give a file's path or "
                                "a packaged stop list's name: smart")
