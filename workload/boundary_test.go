package workload

import (
	"testing"
	"time"
)

func TestBoundary(t *testing.T) {
	tests := []struct {
		name   string
		spec   Spec
		edges  []time.Duration // the attacked edges, all of them
		edgeNs time.Duration   // the effective Edge
	}{
		{
			// Defaults: Edge = Window/100 = 10ms, every 2 windows: edges at
			// 1s, 3s, 5s, 7s, 9s.
			name:   "defaults",
			spec:   Spec{Name: "boundary", Duration: 10 * time.Second, Limit: 100, Window: time.Second},
			edges:  []time.Duration{1e9, 3e9, 5e9, 7e9, 9e9},
			edgeNs: 10 * time.Millisecond,
		},
		{
			// Every window attacked: each window holds 2L, not just a span.
			name:   "every window",
			spec:   Spec{Name: "boundary", Duration: 3500 * time.Millisecond, Limit: 5, Window: time.Second, EveryWindows: 1, Edge: 100 * time.Millisecond},
			edges:  []time.Duration{1e9, 2e9, 3e9},
			edgeNs: 100 * time.Millisecond,
		},
		{
			// More arrivals than nanoseconds in Edge: instants repeat, the
			// counts still hold.
			name:   "crowded",
			spec:   Spec{Name: "boundary", Duration: 4 * time.Microsecond, Limit: 50, Window: time.Microsecond, Edge: 7},
			edges:  []time.Duration{1000, 3000},
			edgeNs: 7,
		},
		{
			// Limit 1: one arrival at edge-1, one at the edge.
			name:   "limit 1",
			spec:   Spec{Name: "boundary", Duration: 2500 * time.Millisecond, Limit: 1, Window: time.Second},
			edges:  []time.Duration{1e9},
			edgeNs: 10 * time.Millisecond,
		},
		{
			// Edge = Window: the attack fills two whole windows.
			name:   "whole window",
			spec:   Spec{Name: "boundary", Duration: 4 * time.Second, Limit: 3, Window: time.Second, Edge: time.Second},
			edges:  []time.Duration{1e9, 3e9},
			edgeNs: time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as := collect(t, tt.spec)
			L := int(tt.spec.Limit)
			if len(as) != 2*L*len(tt.edges) {
				t.Fatalf("%d arrivals, want 2*%d for each of %d edges", len(as), L, len(tt.edges))
			}
			for _, edge := range tt.edges {
				before := countIn(as, edge-tt.edgeNs, edge)
				after := countIn(as, edge, edge+tt.edgeNs)
				if before != L || after != L {
					t.Errorf("edge %v: %d in [edge-Edge, edge) and %d in [edge, edge+Edge), want %d each", edge, before, after, L)
				}
				if countIn(as, edge-1, edge) == 0 || countIn(as, edge, edge+1) == 0 {
					t.Errorf("edge %v: want arrivals at edge-1 and at the edge itself", edge)
				}
				spread := L > 1 // a single arrival each side sits next to the edge
				if spread && (countIn(as, edge-tt.edgeNs, edge-tt.edgeNs+1) == 0 || countIn(as, edge+tt.edgeNs-1, edge+tt.edgeNs) == 0) {
					t.Errorf("edge %v: want arrivals at edge-Edge and edge+Edge-1, the ends of the spread", edge)
				}
			}
		})
	}
}

// TestBoundaryCut: Duration in the middle of an attack cuts it; nothing at
// or after Duration.
func TestBoundaryCut(t *testing.T) {
	as := collect(t, Spec{Name: "boundary", Duration: time.Second + 5*time.Millisecond, Limit: 100, Window: time.Second})
	if len(as) <= 100 || len(as) >= 200 {
		t.Fatalf("%d arrivals, want all 100 before the edge and part of the 100 after", len(as))
	}
}
