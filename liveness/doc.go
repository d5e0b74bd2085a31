// Package liveness computes when each tensor of a model is live and which
// class of memory it needs.
//
// Input: a validated *graph.Model. Output: *Lifetimes, a new value; the
// model is never changed. It imports graph only, never plan, emit or verify.
//
// # Steps
//
// All subgraphs share one timeline of steps, numbered as TensorFlow Lite
// Micro numbers its allocation scopes. The Schedule says in which order each
// subgraph's operators run (by default the order the model lists them in,
// which is TFLM's) and every step follows from it. Step 0 is the main
// subgraph's inputs; each operator takes the next step; an operator that calls
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
// # Limits
//
// A called subgraph runs again on every call, so the timeline can grow
// exponentially with the depth of calls. Analyze refuses a model whose
// timeline would exceed MaxSteps steps or MaxUses operand uses, or whose
// calls nest deeper than MaxDepth, before it schedules anything.
//
// # Classes
//
// Constant tensors have data in their buffer (inline or in the offset/size
// form); persistent tensors are is_variable state that must survive between
// invocations (even when the model gives them initial data); scratch
// tensors are everything else that occupies bytes; Unallocated tensors take
// no arena bytes, and Note says why.
//
// # Edge cases
//
//   - A tensor no operator and no subgraph boundary refers to is Unallocated
//     ("unused"), constants included: nothing reads it at run time.
//   - A zero-size tensor (a dimension is 0; a constant with an empty buffer)
//     is Unallocated ("zero-size").
//   - A RESOURCE tensor is a handle, Unallocated ("resource handle"); the
//     variable it names gets a persistent buffer (see Variables).
//   - A STRING tensor with data is Constant; without, its size is only known
//     at run time, so it is Unallocated with NoteString and the firmware
//     must provide it.
//   - A tensor read but never written (and not a subgraph input) is live
//     from its first read to its last.
//   - An operator output nobody reads is live at its operator's steps only.
//   - Optional inputs given as -1 are skipped.
//   - A dynamic shape (shape_signature with -1) is planned with the concrete
//     shape and flagged Dynamic, so reports can say so.
//   - A tensor that is both a model input and a model output lives from
//     step 0 to the last step.
//
// # Resource variables
//
// VAR_HANDLE operators with the same (container, shared_name) name one
// Variable, whose size is the largest value ASSIGN_VARIABLE writes or
// READ_VARIABLE returns through any of its handles (handles are followed
// into and out of WHILE and IF subgraphs). A handle without a container
// is, as in TFLM, a handle of the variables of its shared_name in any
// container, and of each of them here (the rule: Variable).
//
// # Aliases
//
// The output of RESHAPE, SQUEEZE, EXPAND_DIMS or BITCAST reinterprets its
// first input's bytes, so by default it joins that input's alias group and
// shares its buffer; the group's root gets Group, the union of its members'
// lifetimes, which plan uses as the buffer's lifetime. Options.NoAlias turns
// this off. A view never joins when either tensor is an input or output of
// any subgraph (the caller, or a control-flow kernel, owns those bytes),
// when the two sizes differ, or when either is not scratch.
//
// Sharing bytes is valid only while nobody else writes them (the sharing
// rule, liveness/alias.go): a view never joins a group whose root some
// operator writes after the view in the model's order (a tensor written
// twice, or by an operator whose output is its own input), nor does a
// view output that a second operator writes; an in-place write is taken
// only where every member of its input's group is dead.
//
// With Options.Kernels, an operator's output joins the group of an input
// that dies at the operator when a kernel contract lets the kernel write
// it there (see inPlace). An exact contract puts the output exactly over
// the input; others put it at another offset, so members of a group need
// not share the root's first byte or size. Each member's AliasOffset is
// where it starts relative to the root, and the root's Extent covers every
// member: the group is one block of Extent.Size() bytes, live over Group.
// The root is the group's first tensor, so a member written over it with
// its input at its end starts before it, at a negative offset:
//
//	bytes:     -32     0       32
//	PAD out     [===============]      member, AliasOffset -32
//	PAD in              [=======]      root, Extent [-32, 32)
//
// With Options.ExactOverlap, the output of a slice (SPLIT, SPLIT_V,
// SLICE, STRIDED_SLICE) that is one contiguous block of its input joins
// the input's group over that block, as a view does, and the inputs of a
// CONCATENATION each join its output's group in their slots, after the
// in-place writes: the copying kernel then copies bytes exactly onto
// themselves (copies.go; kernels/copy.go says why that is allowed).
//
// Before either, the operands of each Ethos-U operator that the model's
// own offline plan places form a group at the offsets from one another
// that plan gives them (OwnPlan; ownplan.go cites the contract): the
// operator's scratch is the root, and members overlap as the model's plan
// has them. Views and in-place writes leave such tensors alone.
package liveness
