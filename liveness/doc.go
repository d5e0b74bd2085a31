// Package liveness computes when each tensor of a model is live and which
// class of memory it needs.
//
// Input: a validated *graph.Model. Output: *Lifetimes, a new value; the
// model is never changed. It imports graph only, never plan, emit or verify.
//
// # Steps
//
// All subgraphs share one timeline of steps, numbered as TensorFlow Lite
// Micro numbers its allocation scopes. Step 0 is the main subgraph's
// inputs; each operator takes the next step; an operator that calls
// subgraphs (WHILE, IF, CALL_ONCE, STABLEHLO_COMPOSITE) schedules each called
// subgraph inside itself, the callee's inputs taking one step and its
// operators one step each. The caller's span runs from its own step to the
// last step of its callees, and its inputs and outputs are live over the
// whole span:
//
//	step:        0     1     2     3     4     5     6     7
//	main:      inputs WHILE ................................
//	cond:                  inputs LESS
//	body:                              inputs ADD   MUL   ADD
//
//	main input  [=============================================]  0..7
//	WHILE out         [=======================================]  1..7
//	cond arg          [=====]                                   2..2
//	body tmp                                  [=====]           5..6
//
// Lifetimes are inclusive intervals [First, Last] of steps, as TFLM's
// first_created and last_used are. A tensor is live from the step that
// writes it (step 0 for main inputs; the callee's input step for a called
// subgraph's inputs) to the last step that reads it; the outputs of a
// subgraph live to its last step. A subgraph no operator calls (a second
// signature's entry point) is scheduled on its own after the main one.
//
// # Classes
//
// Constant tensors have data in their buffer; persistent tensors are
// is_variable state that must survive between invocations; scratch tensors
// are everything else that occupies bytes; Unallocated tensors take no
// arena bytes (never used, zero-sized, or resource handles).
package liveness
