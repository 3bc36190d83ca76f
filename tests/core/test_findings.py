"""core.findings: each finding once, in order, capped; the counts agree with what is shown."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from continuity_checks.core.findings import Finding, Report, Severity

findings = st.builds(
    Finding,
    path=st.sampled_from(["a.json", "b.json", "c/d.json"]),
    line=st.one_of(st.none(), st.integers(1, 5)),
    column=st.none(),
    rule=st.sampled_from(["DL101", "DL102"]),
    message=st.sampled_from(["x", "y"]),
    severity=st.sampled_from(list(Severity)),
)


@given(st.lists(findings, max_size=60), st.integers(1, 6), st.integers(1, 20))
def test_caps_and_counts_agree(found: list[Finding], per_file: int, total: int) -> None:
    report = Report(findings=found, max_per_file=per_file, max_total=total)
    shown = report.sorted_findings()
    unique = set(found)
    assert len(shown) + report.not_shown == len(unique)
    assert report.errors + report.warnings == len(unique)
    assert len(shown) <= total
    assert all(sum(f.path == p for f in shown) <= per_file for p in {f.path for f in shown})
    assert shown == sorted(shown, key=lambda f: f.sort_key({}))


def test_history_order_not_hash_order() -> None:
    late, early = "0" * 40, "f" * 40
    report = Report(
        findings=[
            Finding("a", None, None, "DL207", "m", commit=late),
            Finding("a", None, None, "DL207", "m", commit=early),
        ],
        commit_order={early: 1, late: 2},
    )
    assert [f.commit for f in report.sorted_findings()] == [early, late]
