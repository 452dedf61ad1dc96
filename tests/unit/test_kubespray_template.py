"""The small Jinja evaluator for kubespray's download defaults."""

import pytest

from harness.kubespray.template import Checksum, Scope, Table, TemplateError, load_yaml, version_compare


def scope(**layers):
    return Scope([layers])


@pytest.mark.parametrize("expr, expected", [
    ("'a' ~ 'b'", "ab"),
    ("1 + 2", 3),
    ("x == 'on' and not y", True),
    ("y or z", [1]),
    ("'v' if x == 'on' else 'w'", "v"),
    ("'v' if y", ""),
    ("x in ['on', 'off']", True),
    ("x not in ['on']", False),
    ("(v | split('.'))[:-1] | join('.')", "1.40"),
    ("((v | split('.'))[1] | int) + 1", 41),
    ("(t | dict2items)[0].key", "k1"),
    ("(t | dict2items)[-1].value", 2),
    ("t.keys() | list", ["k1", "k2"]),
    ("(['1.41.0', '1.40.2', '1.39.0'] | select('version', '1.41', '<'))[0]", "1.40.2"),
    ("v is version('1.40.0', '>=')", True),
    ("v is version('1.40.10', '>=')", False),
    ("nothing is defined", False),
    ("nothing is not defined", True),
    ("nothing | default('d')", "d"),
    ("nothing | d(None)", None),
    ("x | default('d')", "on"),
    ("-1", -1),
    ("S | lower", "linux"),
])
def test_expressions(expr, expected):
    s = scope(x="on", y=False, z=[1], v="1.40.3", t={"k1": 1, "k2": 2}, S="Linux")
    assert s.evaluate(expr) == expected


def test_templates_render_lazily_through_layers_with_later_layers_winning():
    s = Scope([{"a": "{{ b }}/x", "b": "low", "c": "{{ missing }}"}, {"b": "high"}])
    assert s.get("a") == "high/x"  # `c` is never read, so its undefined name does not matter


def test_a_lone_expression_keeps_its_type_and_mixed_text_is_a_string():
    s = scope(n=3, flag="{{ n > 2 }}", text="n={{ n }}")
    assert s.get("flag") is True and s.get("text") == "n=3"


def test_the_branch_not_taken_is_not_evaluated():
    s = scope(static=False, t={"amd64": {"2.0": "sha256:x"}},
              pick="{{ t['amd64']['9.9'] if static else t['amd64']['2.0'] }}")
    assert s.get("pick") == "sha256:x"


def test_an_undefined_variable_is_named():
    with pytest.raises(TemplateError, match="in `url`: `host` is not defined"):
        scope(url="https://{{ host }}/x").get("url")


def test_a_missing_table_row_names_the_table_and_version():
    s = Scope([{"kubeadm_checksums": Table("kubeadm_checksums", {"amd64": {"1.40.0": "sha256:a"}}),
                "want": "{{ kubeadm_checksums['amd64']['1.40.9'] }}"}])
    with pytest.raises(TemplateError, match=r"kubeadm_checksums\['amd64'\] has no '1.40.9'"):
        s.get("want")


def test_a_table_value_remembers_table_arch_and_version():
    s = Scope([{"runc_checksums": Table("runc_checksums", {"amd64": {"2.1.0": "sha256:abc"}}),
                "v": "2.1.0", "sum": "{{ runc_checksums['amd64'][v] }}"}])
    got = s.get("sum")
    assert isinstance(got, Checksum) and got == "sha256:abc"
    assert (got.table, got.arch, got.version) == ("runc_checksums", "amd64", "2.1.0")


@pytest.mark.parametrize("text, message", [
    ("{% if a %}x{% endif %}", "blocks are not evaluated"),
    ("{{ a | to_json }}", "filter `to_json` is not evaluated"),
    ("{{ a is regex('x') }}", "test `regex` is not evaluated"),
    ("{{ lookup('env', 'HOME') }}", "lookup"),
    ("{{ a = 1 }}", "cannot read|expected"),
])
def test_what_the_evaluator_does_not_handle_is_refused(text, message):
    with pytest.raises(TemplateError, match=message):
        scope(a="1", t=text).get("t")


def test_self_reference_is_refused():
    with pytest.raises(TemplateError, match="refers to itself"):
        scope(a="{{ b }}", b="{{ a }}").get("a")


def test_version_comparison_is_numeric_per_part():
    assert version_compare("1.40.10", "1.40.9", ">") and version_compare("3.6.14", "3.7", "<")
    assert version_compare("2.0", "2.0.0", "<")  # loose: a longer version sorts after


def test_yaml_keys_stay_as_written():
    data = load_yaml("t:\n  1.10: a\n  '1.36': b\n  2: c\nflag: true\n", "f.yml")
    assert list(data["t"]) == ["1.10", "1.36", "2"] and data["flag"] is True
    with pytest.raises(TemplateError, match="f.yml: expected a mapping"):
        load_yaml("- a\n", "f.yml")


def test_a_table_that_grows_reads_a_missing_version_as_an_empty_checksum_naming_its_row():
    # a scenario's containerd_version beyond the checkout's table: kubelab adds that row itself
    s = Scope([{"nerdctl_archive_checksums": Table("nerdctl_archive_checksums", {"amd64": {"2.3.0": "sha256:a"}},
                                                   grows=True),
                "want": "{{ nerdctl_archive_checksums['amd64']['2.3.1'] }}"}])
    got = s.get("want")
    assert isinstance(got, Checksum) and got == ""
    assert (got.table, got.arch, got.version) == ("nerdctl_archive_checksums", "amd64", "2.3.1")
