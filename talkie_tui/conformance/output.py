"""Where results go: a plain line per check (or a JSON object with `--json`), JUnit XML."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from talkie_tui.conformance.report import Result, summary_line
from talkie_tui.core.sanitize import clean_text

__all__ = ["Reporter", "junit_xml"]


@dataclass
class Reporter:
    """Prints each result as it comes and the summary at the end; writes JUnit XML if asked."""

    protocol: str
    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)
    as_json: bool = False
    junit: Path | None = None
    results: list[Result] = field(default_factory=list)

    def emit(self, result: Result) -> None:
        """Record one check's result and print it."""
        self.results.append(result)
        line = json.dumps(result.record(), ensure_ascii=False) if self.as_json else result.line()
        print(line, file=self.out, flush=True)

    @property
    def failed(self) -> bool:
        """True when any check failed."""
        return any(result.verdict == "FAIL" for result in self.results)

    def finish(self, origin: str, seconds: float) -> None:
        """The summary line (on stderr with `--json`, so stdout stays one object a line)."""
        line = summary_line(origin, self.results, seconds, self.protocol)
        print(line, file=self.err if self.as_json else self.out, flush=True)
        if self.junit is not None:
            self.junit.write_text(junit_xml(self.protocol, origin, self.results, seconds))


def junit_xml(protocol: str, origin: str, results: list[Result], seconds: float) -> str:
    """The results as a JUnit XML report: one testsuite, one testcase per check."""
    suite = ET.Element(
        "testsuite",
        name=f"{protocol} conformance of {clean_text(origin)}",
        tests=str(len(results)),
        failures=str(sum(r.verdict == "FAIL" for r in results)),
        errors="0",
        skipped=str(sum(r.verdict == "SKIP" for r in results)),
        time=f"{seconds:.3f}",
    )
    for result in results:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"conformance.{protocol.split('/')[0].replace(' ', '_')}",
            name=result.name,
            time=f"{result.seconds:.3f}",
        )
        if result.section or result.title:
            properties = ET.SubElement(case, "properties")
            ET.SubElement(properties, "property", name="section", value=result.section)
            ET.SubElement(properties, "property", name="title", value=result.title)
        detail = clean_text(result.reason)
        if result.verdict == "FAIL":
            ET.SubElement(case, "failure", message=detail).text = detail
        elif result.verdict == "SKIP":
            ET.SubElement(case, "skipped", message=detail)
    ET.indent(suite)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"
    )
