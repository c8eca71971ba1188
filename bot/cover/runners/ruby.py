"""RSpec with its JSON formatter; coverage from SimpleCov, else Ruby's own `Coverage`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.cover.coverage import LineCoverage, parse_simplecov
from bot.cover.results import CaseResult, parse_rspec_json
from bot.cover.runners.base import SuiteRunner, quoted

_RUBY_HELPER = """\
# Written by agentbot /cover: line coverage for this run, SimpleCov where installed.
out = ENV.fetch("AGENTBOT_COVER_OUT")
if ENV["AGENTBOT_COVER_COVERAGE"] == "1"
  begin
    require "simplecov"
    SimpleCov.coverage_dir(File.join(out, "coverage"))
    SimpleCov.formatter = SimpleCov::Formatter::SimpleFormatter
    SimpleCov.print_error_status = false
    SimpleCov.start
  rescue LoadError
    require "coverage"
    require "json"
    Coverage.start(lines: true)
    at_exit do
      lines = Coverage.result.transform_values { |v| v[:lines] }
      File.write(File.join(out, "coverage.json"), JSON.dump(lines))
    end
  end
end
"""


@dataclass
class RSpecRunner(SuiteRunner):
    """RSpec with its JSON formatter; SimpleCov (or Ruby's `Coverage`) through a helper."""

    bundler: bool = False

    def command(self, files: Sequence[str], out: str, coverage_of: Sequence[str]) -> str:
        """`rspec --format json …`, the coverage helper loaded first through RUBYOPT."""
        (self.repo / out / "agentbot_cover.rb").write_text(_RUBY_HELPER)
        # RUBYOPT loads the helper before anything else (.rspec's own --require included),
        # so coverage starts before the code under test is loaded.
        env = (
            f"AGENTBOT_COVER_OUT={out} AGENTBOT_COVER_COVERAGE={'1' if coverage_of else '0'}"
            f" RUBYOPT=-r./{out}/agentbot_cover.rb"
        )
        rspec = "bundle exec rspec" if self.bundler else "rspec"
        return (
            f"{env} {rspec} --format progress --format json --out {out}/rspec.json {quoted(files)}"
        ).rstrip()

    def read(self, out: Path, root: str) -> tuple[list[CaseResult], LineCoverage | None]:
        """RSpec's JSON, then SimpleCov's resultset or the fallback's file."""
        tests = parse_rspec_json((out / "rspec.json").read_text(encoding="utf-8"), root)
        for name in ("coverage/.resultset.json", "coverage.json"):
            if (out / name).is_file():
                return tests, parse_simplecov((out / name).read_text(), root)
        return tests, None
