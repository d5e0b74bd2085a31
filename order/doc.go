// Package order chooses the order a model's operators run in so that the
// peak of live scratch bytes is as small as it can make it: a memory-aware
// scheduler, ahead of time, for liveness.Options.Order.
//
// Input: a validated *graph.Model (as tflite.Load returns it) and Options.
// Output: *Result, a new value: for each subgraph a permutation of its
// operators, its peak, the model order's peak, a lower bound and whether
// the order is proven optimal. The model is never changed. Non-test code
// imports only the standard library and graph; never liveness, plan, emit
// or verify.
//
// # Legal orders
//
// Within each subgraph an order keeps the model's meaning when an operator
// that writes a tensor and any operator that reads or writes it keep the
// model's relative order, and so do the operators that touch one stateful
// (is_variable) tensor or one resource variable (themselves or through the
// subgraphs they call). These are verify's rules (BadSchedule). Schedule is
// a little stricter, so that every order it returns passes verify: a
// handle may reach a variable along more paths than verify follows, two
// operators that run one subgraph keep their order, and a CALL_ONCE keeps
// its place (all operators the model lists before it run before it, all
// after it after). Called subgraphs run inside their caller's span as
// always: each subgraph's own list is reordered, nothing moves between
// subgraphs.
//
// # Cost model
//
// Steps, lifetimes, aliases and classes are liveness's (see its package
// doc); sizes are rounded up to Options.Alignment, as plan places them. In
// one subgraph a buffer (a scratch tensor, or an alias group counted once)
// is live from the first operator that touches it to the last, from the
// input step when it holds a subgraph input, and to the last step when it
// holds an output. An operator that runs subgraphs adds the peak of its
// costliest callee, scheduled first (callees before callers). For the
// diamond in -> a1 -> a2, in -> b1 -> b2, (a2, b2) -> out, sizes in bytes:
//
//	order    step: in   a1    a2    b1    b2    out   live
//	model    0    [16]                                   16
//	         1    [16   32]                              48   op0
//	         2    [16   32    32]                        80   op1
//	         3    [16         32    64]                  112  op2 <- peak
//	         4    [           32    64    8]             104  op3
//	         5    [           32          8     8]       48   op4
//	b first  1    [16               64]                  80   op2
//	         2    [16               64    8]             88   op3 <- peak
//	         3    [16   32                8]             56   op0
//	         4    [     32    32          8]             72   op1
//	         5    [           32          8     8]       48   op4
//
// A subgraph that runs more than once holds its tensors over the hull of
// its runs on the real timeline; the cost model counts each run alone, so
// it never counts more. Result's peaks are measured on the real timeline,
// by a walk that shares no code with the search (timeline.go); tests check
// it against liveness.
//
// # Search
//
// Each subgraph is split into segments: a cut operator (every other one
// must run before or after it) is a segment of its own, the operators
// between two cuts form one, and every legal order runs the segments one
// after another. Then:
//
//  1. Lower bound. For every operator, the bytes it touches, its callees'
//     peak and the buffers open across it in every order (started by an
//     operator that must run before it, needed by one that must run after
//     it). For the operators that cost most in the best order so far, the
//     fewest bytes that can be live while they run over every set of
//     operators that may have run: a minimum cut (bound.go, flow.go).
//  2. Beam search per segment (width 16) over sets of operators that have
//     run, ranked by the peak so far or the bound left, then by the bytes
//     left open. The model's order is the fallback.
//  3. Large-neighbourhood search on the whole order (lns.go): a window of
//     consecutive operators around the peak, with operators from far away
//     that touch a buffer live at the peak and may move into the window,
//     is re-ordered exactly; kept when the whole order improves.
//  4. Exact best-first search per segment, highest peaks first, over sets
//     of operators that have run (exact.go): a set's cost is the least
//     peak that reaches it, states at or above the best peak found are
//     cut, and an operator that starts no buffer outliving it runs at once
//     when that costs no more than the state's priority. A segment already
//     at the bound is left alone.
//
// Every step stops when the peak reaches the bound or the budget runs out;
// the best order so far is returned. The budget counts steps of search and
// the effort inside them (operators evaluated, buffer users looked at), so
// a graph where a thousand operators may run next costs its due and the
// work budget, not the wall clock, stops the search; a beam stopped midway
// completes its best partial order greedily for a little more effort, then
// depth first from the segment's last operator (each operator after the
// ones it waits for, the latest first), in linear time. Results are deterministic unless the wall
// clock cuts a search short; an order is then never reported proven.
//
// # Quality
//
// On the 63 models of the reference corpus (../shared) every order is
// proven optimal within the default budget, the slowest (dp_net, 2,338
// operators, one segment) in about 0.15 s on two cores; all others in a few
// milliseconds. Against the model's own order okay_nabu_v2 needs 27.0 %
// fewer bytes, vad_v2 14.3 %, dp_net 28.2 % (167,936 bytes, its lower
// bound), while_op_with_forwarding_input 8.3 %; the other 59 models are
// already optimal in their own order. With TFLM's in-place contracts
// (heliac's default) dp_net needs 35.2 % fewer (151,552 bytes), the others
// the same. See TestCorpusFigures. Random models whose subgraphs run more
// than once are often not proven: the cost model is only a bound for them.
// Random dense DAGs of hundreds of operators, with many long-lived values,
// run to the budget unproven.
package order
