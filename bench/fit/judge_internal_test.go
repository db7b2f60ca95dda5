package fit

import "testing"

// TestRankNotWonByAmbiguity: of two models, the one that calls the
// requests it gets wrong "too close to call" scores 100% on its own
// terms, above the other's 90%; compared on the same requests they tie,
// and on all of them the other, which predicts nine in ten, wins.
func TestRankNotWonByAmbiguity(t *testing.T) {
	const n = 10
	adm := []bool{true, true, false, true, false, false, true, true, false, true}
	s := &scope{name: ScopeGlobal, key: make([]int, n), n: 1, group: make([]int32, n), ngroups: n, members: make([][]int, n)}
	for i := range s.group {
		s.group[i] = int32(i)
	}
	d := &data{t: make([]int64, n), adm: adm, scopes: []*scope{s}}
	for i := range d.t {
		d.t[i] = int64(i) * 1e9
	}
	// vague gets the last four wrong and calls them too close to call;
	// sharp gets the last one wrong, and calls nothing too close.
	vague := &entry{fit: Fit{Algorithm: "sliding-log", AgreementPct: 100}, scope: s,
		rec: record{pred: make([]bool, n), amb: make([]bool, n)}}
	sharp := &entry{fit: Fit{Algorithm: "fixed-window", AgreementPct: 90}, scope: s,
		rec: record{pred: make([]bool, n), amb: make([]bool, n)}}
	for i := range n {
		vague.rec.pred[i], sharp.rec.pred[i] = adm[i], adm[i]
		if i >= 6 {
			vague.rec.pred[i], vague.rec.amb[i] = !adm[i], true
		}
	}
	sharp.rec.pred[9] = !adm[9]
	es := []*entry{vague, sharp}
	d.rank(es)
	if es[0] != sharp {
		t.Errorf("ranked %s first, want fixed-window: it predicts more of the same requests", es[0].fit.Algorithm)
	}
	if pv, ps := d.judged(vague, sharp); pv != 100 || ps != 100 {
		t.Errorf("on the requests neither calls too close: %.1f%% and %.1f%%, want 100%% each", pv, ps)
	}
}
