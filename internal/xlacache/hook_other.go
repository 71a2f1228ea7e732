//go:build !(((linux && amd64) || darwin) && !noxla && cgo)

package xlacache

import "errors"

// Install is not available where GoMLX's XLA backend is not compiled in: it returns an error.
func Install(pluginPath string, store *Store) error {
	return errors.New("xlacache: the XLA backend is not compiled into this program")
}
