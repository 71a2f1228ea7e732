//go:build ((linux && amd64) || darwin) && !noxla && cgo

package xlacache

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include "pjrt_abi.h" // the part of the PJRT C API used here, checked against go-xla's header by abi_test.go

static const xc_Api *real_api;

extern xc_Error *xlacacheCompile(xc_Client_Compile_Args *args);

static xc_Error *cached_compile(xc_Client_Compile_Args *args) { return xlacacheCompile(args); }

// wrap_plugin loads the plugin at path and returns a copy of its API table whose PJRT_Client_Compile is
// cached_compile, or NULL with *err set.
static xc_Api *wrap_plugin(const char *path, const char **err) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) { *err = dlerror(); return NULL; }
	typedef const xc_Api *(*get_api_fn)(void);
	get_api_fn get = (get_api_fn)dlsym(h, "GetPjrtApi");
	if (!get) { *err = dlerror(); return NULL; }
	const xc_Api *api = get();
	if (!api) { *err = "GetPjrtApi returned NULL"; return NULL; }
	if (api->struct_size < xc_Api_NEEDED_SIZE) {
		*err = "the plugin's PJRT API lacks executable serialization";
		return NULL;
	}
	size_t n = api->struct_size > XC_API_COPY_MIN_BYTES ? api->struct_size : XC_API_COPY_MIN_BYTES;
	xc_Api *copy = calloc(1, n);
	if (!copy) { *err = "out of memory"; return NULL; }
	memcpy(copy, api, api->struct_size);
	copy->PJRT_Client_Compile = cached_compile;
	real_api = api;
	return copy;
}

// compile_code compiles args' program with its code replaced by code (size bytes); args is as it was after.
static xc_Error *compile_code(xc_Client_Compile_Args *args, char *code, size_t size) {
	const xc_Program *given = args->program;
	xc_Program p = *given;
	p.code = code;
	p.code_size = size;
	args->program = &p;
	xc_Error *err = real_api->PJRT_Client_Compile(args);
	args->program = given;
	return err;
}

// error_text copies the message of err into a malloc'ed string and destroys err.
static char *error_text(xc_Error *err) {
	xc_Error_Message_Args m = {0};
	m.struct_size = xc_Error_Message_Args_STRUCT_SIZE;
	m.error = err;
	real_api->PJRT_Error_Message(&m);
	char *s = malloc(m.message_size + 1);
	if (s) { memcpy(s, m.message, m.message_size); s[m.message_size] = 0; }
	xc_Error_Destroy_Args d = {0};
	d.struct_size = xc_Error_Destroy_Args_STRUCT_SIZE;
	d.error = err;
	real_api->PJRT_Error_Destroy(&d);
	return s;
}

// serialize_executable sets *out to a malloc'ed copy of the serialization of loaded (*size bytes), or returns
// an error message (malloc'ed).
static char *serialize_executable(xc_LoadedExecutable *loaded, char **out, size_t *size) {
	xc_LoadedExecutable_GetExecutable_Args g = {0};
	g.struct_size = xc_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE;
	g.loaded_executable = loaded;
	xc_Error *err = real_api->PJRT_LoadedExecutable_GetExecutable(&g);
	if (err) return error_text(err);
	xc_Executable_Serialize_Args s = {0};
	s.struct_size = xc_Executable_Serialize_Args_STRUCT_SIZE;
	s.executable = g.executable;
	err = real_api->PJRT_Executable_Serialize(&s);
	char *msg = NULL;
	if (err) {
		msg = error_text(err);
	} else {
		*out = malloc(s.serialized_bytes_size);
		if (*out) {
			memcpy(*out, s.serialized_bytes, s.serialized_bytes_size);
			*size = s.serialized_bytes_size;
		} else {
			msg = strdup("out of memory");
		}
		if (s.serialized_executable_deleter) s.serialized_executable_deleter(s.serialized_executable);
	}
	xc_Executable_Destroy_Args d = {0};
	d.struct_size = xc_Executable_Destroy_Args_STRUCT_SIZE;
	d.executable = g.executable;
	err = real_api->PJRT_Executable_Destroy(&d);
	if (err) free(error_text(err));
	return msg;
}

// deserialize_executable loads a serialization made by serialize_executable into client, or returns an
// error message (malloc'ed).
static char *deserialize_executable(xc_Client *client, const char *data, size_t size, xc_LoadedExecutable **out) {
	xc_Executable_DeserializeAndLoad_Args a = {0};
	a.struct_size = xc_Executable_DeserializeAndLoad_Args_STRUCT_SIZE;
	a.client = client;
	a.serialized_executable = data;
	a.serialized_executable_size = size;
	xc_Error *err = real_api->PJRT_Executable_DeserializeAndLoad(&a);
	if (err) return error_text(err);
	*out = a.loaded_executable;
	return NULL;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/gomlx/go-xla/pkg/pjrt"
)

// The cache sits between go-xla and the PJRT plugin: Install loads the plugin itself and registers with go-xla
// (pjrt.RegisterPreloadedPlugin) a copy of the plugin's C API table in which PJRT_Client_Compile is replaced by
// a function that first looks the program up in the Store. Everything else (buffers, execution, errors) is the
// plugin's own. A compiled executable leaves and enters the store through the plugin's PJRT_Executable_Serialize
// and PJRT_Executable_DeserializeAndLoad, so GoMLX and go-xla receive a PJRT_LoadedExecutable either way.

var (
	installMu sync.Mutex
	installed *Store // the store of the installed hook; nil before Install
)

// Install loads the PJRT plugin at pluginPath (an absolute path) and registers it with go-xla under the name
// pluginPath, with compilations going through store. GoMLX's XLA backend created afterwards with that absolute
// path as its plugin ("xla:" + pluginPath) then uses it instead of loading the plugin itself. Install must be
// called at most once per process, before any backend loads the plugin; the registered table and the plugin
// stay loaded for the life of the process.
func Install(pluginPath string, store *Store) error {
	installMu.Lock()
	defer installMu.Unlock()
	if installed != nil {
		return errors.New("xlacache: Install called twice")
	}
	if store == nil {
		return errors.New("xlacache: nil store")
	}
	cPath := C.CString(pluginPath)
	defer C.free(unsafe.Pointer(cPath))
	var cErr *C.char
	api := C.wrap_plugin(cPath, &cErr)
	if api == nil {
		return fmt.Errorf("xlacache: loading %s: %s", pluginPath, C.GoString(cErr))
	}
	installed = store
	if err := pjrt.RegisterPreloadedPlugin(pluginPath, uintptr(unsafe.Pointer(api))); err != nil {
		return fmt.Errorf("xlacache: registering %s: %w", pluginPath, err)
	}
	return nil
}

//export xlacacheCompile
func xlacacheCompile(args *C.xc_Client_Compile_Args) *C.xc_Error {
	store := installed
	prog := args.program
	code := canonicalCode(unsafe.Slice((*byte)(unsafe.Pointer(prog.code)), int(prog.code_size)))
	key := store.Key(
		C.GoBytes(unsafe.Pointer(prog.format), C.int(prog.format_size)),
		code,
		unsafe.Slice((*byte)(unsafe.Pointer(args.compile_options)), int(args.compile_options_size)),
	)
	name := moduleName(code[:min(len(code), 512)])
	if load(store, key, name, args) {
		return nil
	}
	// Absent: compile it, unless another process is compiling the same program now; then wait for it and load.
	start := time.Now()
	unlock := store.Lock(key)
	defer unlock()
	if waited := time.Since(start); waited > 10*time.Millisecond {
		count(func(s *Stats) { s.Waited++; s.Wait += waited })
		store.trace("wait", key, name, waited, 0)
		if load(store, key, name, args) {
			return nil
		}
	}

	start = time.Now()
	cCode := C.CBytes(code) // the program the key names: the plugin compiles exactly it
	err := C.compile_code(args, (*C.char)(cCode), C.size_t(len(code)))
	C.free(cCode)
	if err != nil {
		return err
	}
	took := time.Since(start)
	count(func(s *Stats) { s.Misses++; s.Compile += took })
	store.trace("compile", key, name, took, int(prog.code_size))

	start = time.Now()
	var out *C.char
	var size C.size_t
	if msg := C.serialize_executable(args.executable, &out, &size); msg != nil {
		C.free(unsafe.Pointer(msg))
		return nil
	}
	serialized := unsafe.Slice((*byte)(unsafe.Pointer(out)), int(size))
	saveErr := store.Save(key, serialized)
	C.free(unsafe.Pointer(out))
	if saveErr == nil {
		count(func(s *Stats) { s.Stored++; s.Save += time.Since(start) })
	}
	return nil
}

// load sets args' executable to the one stored under key and reports whether it did; an entry it cannot use is
// removed.
func load(store *Store, key, name string, args *C.xc_Client_Compile_Args) bool {
	start := time.Now()
	data, found, readErr := store.Load(key)
	if !found {
		return false
	}
	if readErr == nil {
		var loaded *C.xc_LoadedExecutable
		msg := C.deserialize_executable(args.client, (*C.char)(unsafe.Pointer(unsafe.SliceData(data))),
			C.size_t(len(data)), &loaded)
		if msg == nil {
			args.executable = loaded
			took := time.Since(start)
			count(func(s *Stats) { s.Hits++; s.Load += took })
			store.trace("load", key, name, took, len(data))
			return true
		}
		C.free(unsafe.Pointer(msg))
	}
	store.Remove(key)
	count(func(s *Stats) { s.Corrupt++; s.Load += time.Since(start) })
	return false
}
