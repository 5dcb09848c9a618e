"""The covington_nm analyses of the workflow: how tight the loss bounds are
along training (oracle-bounds) and what the arc moves do (arc-moves)."""
import json

from ..system_names import system_name
from .layout import RunLayout, log


class OracleSteps(RunLayout):
    def oracle_bounds(self) -> None:
        """Paper Table 1: bound tightness along covington_nm (upper) training."""
        from benchmarks.oracle_analysis import bound_tightness
        from benchmarks.oracle import bounds_table, training_overrides

        results = {}
        for tb in self.treebanks:
            target = self.metrics(tb, "oracle_bounds.json")
            if self.todo(target):
                log(f"[{tb}] loss bounds along {self.args.bound_transitions} training transitions")
                result = bound_tightness(
                    self.args.configs / "nonmono_parser.cfg",
                    training_overrides(self.corpus(tb, "train"), "upper", self.seeds[0]),
                    self.args.bound_transitions, max_nodes=self.args.max_nodes, log=log)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(json.dumps(result, indent=2))
            results[tb] = json.loads(target.read_text())
        self.write_result("oracle_bounds.md", bounds_table(results))

    def arc_moves(self) -> None:
        """Paper section 6.3: what the covington_nm parsers' arc moves do on dev."""
        from benchmarks.oracle_analysis import arc_move_effects
        from benchmarks.oracle import arc_move_examples, arc_moves_table

        results = {}
        for tb in self.treebanks:
            for system, seed, run in self.runs():
                if system_name(system) != "covington_nm":
                    continue
                target = self.metrics(tb, f"{run}.arc_moves.json")
                if self.todo(target):
                    nlp = self.load(tb, run)
                    examples = arc_move_examples(nlp, self.corpus(tb, "dev"))
                    target.write_text(json.dumps(arc_move_effects(nlp, examples), indent=2))
                results[(tb, run)] = json.loads(target.read_text())
        self.write_result("arc_moves.md", arc_moves_table(results))
