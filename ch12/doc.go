// Package ch12 is chapter 12 itself, shared by its notebooks and its command (cmd/seeds), in a few calls: its setup
// (Setup: the engine, the tokenizer over every task, the training and held-out tasks, the result store, the RL base
// agent, loaded or trained on first use and not before; With for a chapter of another recipe, vocabulary,
// environment or starting agent), every training run the chapter names, defined once as a value (Run, the book's
// train_rl, with GRPO's seams as options; RunLoop for a loop of one's own; Critic), the book's held_out evaluation
// (HeldOut), and probes whose printed report is stored (Printed). A notebook's cell and a command that ask for the same run get one
// stored result. In a notebook it also gathers the store's notices and its runs' progress into one display per cell
// program that updates in place (see Status); a loop run without the store (agentrl.TrainRL) prints nothing.
//
// A notebook's setup cell is then
//
//	var ch = must(ch12.Setup())
//
// and every cell program that does not touch the base agent never loads it.
package ch12
