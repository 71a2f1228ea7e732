package agentrl

// Test hooks for the package's external tests.
var (
	CodeHashOf = codeHash   // CodeHash of a named file
	FuncCodeAt = funcCodeAt // FuncCode of the function that starts at a line of a file
	RunKey     = runKey     // TrainedRun's key
	LockPath   = (*Store).lockPath
)
