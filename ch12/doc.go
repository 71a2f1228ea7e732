// Package ch12 is chapter 12 itself, shared by its notebooks and its command (cmd/seeds): its setup
// (the tokenizer over every task, the training and held-out tasks, the result store, the RL base agent, loaded or
// trained on first use and not before), every training run the chapter names, defined once as a value (Chapter.Run,
// Chapter.RunIn, Chapter.RunFrom, Chapter.RunLoop, Chapter.Critic), the book's held_out evaluation, and probes whose
// printed report is stored (Chapter.Printed). A notebook's cell and a command that ask for the same run get one
// stored result. In a notebook it also gathers the store's notices and its runs' progress into one display per cell
// program that updates in place (see Status); a loop run without the store (agentrl.TrainRL) prints nothing.
//
// A notebook's setup cell is then
//
//	var ch = must(ch12.Setup())
//
// and every cell program that does not touch the base agent never loads it.
package ch12
