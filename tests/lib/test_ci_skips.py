"""A missing prerequisite skips a test on a person's machine and fails it under CI."""
import pytest
from support.ci import in_ci, require_module, skip_unless_ci


@pytest.mark.parametrize("value, expected", [("true", True), ("1", True), ("", False), ("false", False), ("0", False)])
def test_ci_is_read_from_the_environment(monkeypatch, value, expected):
    monkeypatch.setenv("CI", value)
    assert in_ci() is expected


def test_a_missing_prerequisite_skips_locally_and_fails_under_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no such thing"):
        skip_unless_ci("no such thing")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="no such thing .under CI this fails"):
        skip_unless_ci("no such thing")
    with pytest.raises(pytest.fail.Exception, match="polyattn_no_such_module is not installed .pip install x"):
        require_module("polyattn_no_such_module", "pip install x")
    assert require_module("json").dumps([]) == "[]"
