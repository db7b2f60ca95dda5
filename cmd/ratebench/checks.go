package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/ratebench/ratebench/algorithms/all"
	"github.com/ratebench/ratebench/bench/check"
	"github.com/ratebench/ratebench/bench/result"
)

// checksFlag is -check: pass/fail conditions on the result, parsed
// before the run, evaluated on its result before that is written.
type checksFlag struct {
	expr  string
	conds []check.Cond
}

func (c *checksFlag) register(fs *flag.FlagSet) {
	fs.StringVar(&c.expr, "check", "", "pass/fail conditions on the result, e.g. 'burst_ratio<=1.05, gcra.p99<2ms': exit 1 when one fails (conditions: below)")
}

// parse parses -check. With names, the algorithms the run will measure,
// a condition limited to another is refused now, not after the run.
func (c *checksFlag) parse(names []string) error {
	if c.expr == "" {
		return nil
	}
	conds, err := check.Parse(c.expr)
	if err == nil && names != nil {
		err = check.Known(conds, names)
	}
	if err != nil {
		return usagef("-check: %v", err)
	}
	c.conds = conds
	return nil
}

// orAll is names, or every algorithm's when there are none: what a run
// given no -algos measures.
func orAll(names []string) []string {
	if len(names) == 0 {
		return all.Names()
	}
	return names
}

// apply evaluates the conditions on res into res.Checks. Its only error
// is a condition naming an algorithm res has no run of, which parse
// catches for run and attack; merge learns its runs from its inputs.
func (c *checksFlag) apply(res *result.Result) error {
	if len(c.conds) == 0 {
		return nil
	}
	checks, err := check.Evaluate(c.conds, res)
	if err != nil {
		return usagef("-check: %v", err)
	}
	res.Checks = checks
	return nil
}

// checkOutcome prints res's checks, failures first, and returns an
// exitStatus of 1 when any failed.
func (e *env) checkOutcome(res *result.Result) error {
	if len(res.Checks) == 0 {
		return nil
	}
	for _, line := range check.Lines(res.Checks) {
		fmt.Fprintln(e.stdout, line)
	}
	if n := check.Failed(res.Checks); n > 0 {
		return exitStatus{1, fmt.Errorf("%d of %d checks failed", n, len(res.Checks))}
	}
	return nil
}

// checkHelp is the grammar of -check and its metrics, for -h.
func checkHelp() []string {
	lines := []string{
		"-check 'COND, COND, ...', each COND [ALGO.]METRIC OP VALUE, OP one of " + strings.Join(check.Ops, " ") + ";",
		"without ALGO a condition holds for every run, with it for that algorithm's (any case);",
		"latencies take a unit (2ms, 150us) or ns. Each check's outcome is printed, on the page",
		"and in result.json's checks; exit 1 when any fails. Metrics:",
	}
	for _, m := range check.MetricsHelp() {
		lines = append(lines, "  "+m)
	}
	return lines
}
