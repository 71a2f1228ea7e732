// Package bookreport is the chapter's book-vs-run report: for each printed line C1…C44 of the reproduction
// targets (testdata/reproduction-targets.md at the repository's root, the contract these rules implement), it finds
// our printed line in the section's notebooks, extracts its values and evaluates the acceptance rule; then it
// evaluates the claims the targets read off the figures and the prose (F1…F3, P1…P10) on lines the notebooks print,
// and renders the result as Markdown (notebooks/REPORT.md).
//
// The book's text is data, embedded from the package's files: the printed lines with the templates our lines must
// match (booklines.tsv), the claims (claims.tsv), the auxiliary lines our notebooks print for the rules
// (auxlines.tsv) and the known deviations' prose (deviations.md). The acceptance rules are Go functions keyed by ID
// (rules.go, claims.go, and deviations.go for the deviations' bounds); loading panics when data and code disagree.
//
// Classes: "1" structural/exact and "3" qualitative/mechanism gate the test; "2" bands are reported (a base agent
// that misses the calibration gate re-centres them); "R" is report-only. A check marked soft (the targets say
// "soft") is reported but does not gate. Rules that need data the line does not print (Σ action_mask, per-step
// histories) are listed under Unchecked.
//
// The package reads what each section's notebooks printed (SectionOutput); it does not read notebooks itself, so
// the Jupyter harness (package notebooks) and the report do not depend on each other.
package bookreport
