/* SPDX-License-Identifier: MIT
 *
 * vmp_jvmti_attach.h - what the HotSpot agent's Agent_OnAttach returns, and
 * the option that stops a recording; shared by the agent and `vmp record
 * --pid`, which reads the value back from the JVM's attach reply ("return
 * code: N").  A JVM records one file at a time; after a stop, another
 * attach starts a new recording.
 */
#ifndef VMP_JVMTI_ATTACH_H
#define VMP_JVMTI_ATTACH_H

/** The whole option string that asks a recording agent to stop. */
#define VMP_JVMTI_STOP_OPTION "stop"

/** Agent_OnAttach's return values. */
enum vmp_jvmti_attach_rc {
    VMP_JVMTI_ATTACH_OK = 0,        /* recording (or stopped, for "stop") */
    VMP_JVMTI_ATTACH_BUSY = 101,    /* a recording is already running in this JVM */
    VMP_JVMTI_ATTACH_IDLE = 102,    /* "stop": no recording is running */
    VMP_JVMTI_ATTACH_NO_FILE = 103, /* the output file could not be created */
    VMP_JVMTI_ATTACH_NO_JVMTI = 104 /* JVMTI, its events or SIGPROF are not available */
};

#endif
