// Package ch12 is chapter 12's setup, shared by its notebooks and commands: the tokenizer over every task, the
// training and held-out tasks, the result store, the RL base agent (loaded or trained on first use, not before) and
// the book's held_out evaluation. In a notebook it also gathers the store's and the training loops' notices into
// one display per cell program that updates in place (see Status).
//
// A notebook's setup cell is then
//
//	var ch = must(ch12.Setup())
//
// and every cell program that does not touch the base agent never loads it.
package ch12
