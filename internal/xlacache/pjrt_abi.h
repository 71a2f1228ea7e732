// pjrt_abi.h declares the part of the PJRT C API that hook.go uses, and nothing more: the head of the API
// table up to the last function it calls, the argument structs of those calls, and the plugin's objects as
// incomplete types. Names carry the prefix xc_ so that abi_test.go can compile them next to go-xla's
// pjrt_c_api.h and check that every member declared here has the size and offset the real header gives it.
//
// Contract for editing: a struct here lists the real struct's members in order, with the real member names,
// up to the real struct's last member (argument structs) or up to the last function hook.go calls (xc_Api);
// members of xc_Api that hook.go does not call are grouped into arrays named unused_*, whose lengths the
// offsets of the following members pin down.

#ifndef AGENTRL_XLACACHE_PJRT_ABI_H_
#define AGENTRL_XLACACHE_PJRT_ABI_H_

#include <stddef.h>

// XC_STRUCT_SIZE is the struct_size a caller that knows the members of type up to last sets; an argument
// struct's xc_..._STRUCT_SIZE is the one for all its members, equal to the real header's PJRT_..._STRUCT_SIZE.
#define XC_STRUCT_SIZE(type, last) (offsetof(type, last) + sizeof(((type *)0)->last))

// The plugin's objects; only pointers to them are handled.
typedef struct xc_Extension_Base xc_Extension_Base;
typedef struct xc_Error xc_Error;
typedef struct xc_Client xc_Client;
typedef struct xc_Executable xc_Executable;
typedef struct xc_LoadedExecutable xc_LoadedExecutable;
typedef struct xc_SerializedExecutable xc_SerializedExecutable;

typedef struct xc_Error_Destroy_Args {
	size_t struct_size;
	xc_Extension_Base *extension_start;
	xc_Error *error;
} xc_Error_Destroy_Args;
enum { xc_Error_Destroy_Args_STRUCT_SIZE = XC_STRUCT_SIZE(xc_Error_Destroy_Args, error) };

typedef struct xc_Error_Message_Args {
	size_t struct_size;
	xc_Extension_Base *extension_start;
	const xc_Error *error;
	const char *message;
	size_t message_size;
} xc_Error_Message_Args;
enum { xc_Error_Message_Args_STRUCT_SIZE = XC_STRUCT_SIZE(xc_Error_Message_Args, message_size) };

typedef struct xc_Program {
	size_t struct_size;
	xc_Extension_Base *extension_start;
	char *code;
	size_t code_size;
	const char *format;
	size_t format_size;
} xc_Program;

typedef struct xc_Client_Compile_Args {
	size_t struct_size;
	xc_Extension_Base *extension_start;
	xc_Client *client;
	const xc_Program *program;
	const char *compile_options;
	size_t compile_options_size;
	xc_LoadedExecutable *executable;
} xc_Client_Compile_Args;

typedef struct xc_LoadedExecutable_GetExecutable_Args {
	size_t struct_size;
	xc_Extension_Base *extension_start;
	xc_LoadedExecutable *loaded_executable;
	xc_Executable *executable;
} xc_LoadedExecutable_GetExecutable_Args;
enum {
	xc_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE = XC_STRUCT_SIZE(xc_LoadedExecutable_GetExecutable_Args, executable)
};

typedef struct xc_Executable_Serialize_Args {
	size_t struct_size;
	xc_Extension_Base *extension_start;
	const xc_Executable *executable;
	const char *serialized_bytes;
	size_t serialized_bytes_size;
	xc_SerializedExecutable *serialized_executable;
	void (*serialized_executable_deleter)(xc_SerializedExecutable *exec);
} xc_Executable_Serialize_Args;
enum {
	xc_Executable_Serialize_Args_STRUCT_SIZE =
		XC_STRUCT_SIZE(xc_Executable_Serialize_Args, serialized_executable_deleter)
};

typedef struct xc_Executable_Destroy_Args {
	size_t struct_size;
	xc_Extension_Base *extension_start;
	xc_Executable *executable;
} xc_Executable_Destroy_Args;
enum { xc_Executable_Destroy_Args_STRUCT_SIZE = XC_STRUCT_SIZE(xc_Executable_Destroy_Args, executable) };

typedef struct xc_Executable_DeserializeAndLoad_Args {
	size_t struct_size;
	xc_Extension_Base *extension_start;
	xc_Client *client;
	const char *serialized_executable;
	size_t serialized_executable_size;
	xc_LoadedExecutable *loaded_executable;
	const char *overridden_serialized_compile_options;
	size_t overridden_serialized_compile_options_size;
} xc_Executable_DeserializeAndLoad_Args;
enum {
	xc_Executable_DeserializeAndLoad_Args_STRUCT_SIZE =
		XC_STRUCT_SIZE(xc_Executable_DeserializeAndLoad_Args, overridden_serialized_compile_options_size)
};

typedef struct xc_Api_Version {
	size_t struct_size;
	xc_Extension_Base *extension_start;
	int major_version;
	int minor_version;
} xc_Api_Version;

typedef void (*xc_unused_fn)(void);

// xc_Api is the head of the plugin's function table. A plugin whose table (its struct_size) ends before
// PJRT_Executable_DeserializeAndLoad cannot serve the cache.
typedef struct xc_Api {
	size_t struct_size;
	xc_Extension_Base *extension_start;
	xc_Api_Version pjrt_api_version;
	void (*PJRT_Error_Destroy)(xc_Error_Destroy_Args *args);
	void (*PJRT_Error_Message)(xc_Error_Message_Args *args);
	xc_unused_fn unused_1[18]; // from PJRT_Error_GetCode to PJRT_Client_AddressableMemories
	xc_Error *(*PJRT_Client_Compile)(xc_Client_Compile_Args *args);
	xc_unused_fn unused_2[19]; // from PJRT_Client_DefaultDeviceAssignment to PJRT_Memory_AddressableByDevices
	xc_Error *(*PJRT_Executable_Destroy)(xc_Executable_Destroy_Args *args);
	xc_unused_fn unused_3[8]; // from PJRT_Executable_Name to PJRT_Executable_OptimizedProgram
	xc_Error *(*PJRT_Executable_Serialize)(xc_Executable_Serialize_Args *args);
	xc_unused_fn unused_4[1]; // PJRT_LoadedExecutable_Destroy
	xc_Error *(*PJRT_LoadedExecutable_GetExecutable)(xc_LoadedExecutable_GetExecutable_Args *args);
	xc_unused_fn unused_5[4]; // from PJRT_LoadedExecutable_AddressableDevices to PJRT_LoadedExecutable_Execute
	xc_Error *(*PJRT_Executable_DeserializeAndLoad)(xc_Executable_DeserializeAndLoad_Args *args);
} xc_Api;
// xc_Api_NEEDED_SIZE is the least struct_size of a plugin's table that hook.go can use.
enum { xc_Api_NEEDED_SIZE = XC_STRUCT_SIZE(xc_Api, PJRT_Executable_DeserializeAndLoad) };

// XC_API_COPY_MIN_BYTES is the least size of the copy of the table that hook.go hands to go-xla, zero past
// the plugin's own struct_size: at least the size of the whole PJRT_Api go-xla is compiled against, so that
// go-xla never reads past the copy (abi_test.go checks this bound).
#define XC_API_COPY_MIN_BYTES 4096

#endif
