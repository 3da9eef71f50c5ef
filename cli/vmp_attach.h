/* SPDX-License-Identifier: MIT
 *
 * vmp_attach.h - load a JVMTI agent into a running HotSpot JVM through the
 * JVM's attach mechanism (the one jcmd uses), without any JDK tool.
 *
 * The mechanism, as HotSpot implements it on Linux: the JVM listens on a unix
 * socket `.java_pid<PID>` in its temporary directory once its attach listener
 * runs.  A client that finds no socket creates `.attach_pid<PID>` in the JVM's
 * working directory (or temporary directory) and sends SIGQUIT; the JVM then
 * starts the listener instead of printing a thread dump.  A request is
 * "1\0<command>\0<arg0>\0<arg1>\0<arg2>\0"; the reply is the request's status
 * as a decimal line, then the command's output.  For `load` (arg0 the library,
 * arg1 "true" for an absolute path, arg2 the agent's options), the output is
 * "return code: N" with N the value Agent_OnAttach returned.  The JVM accepts
 * only clients with its own effective uid (or root) and files owned by it; a
 * root client takes the JVM's uid and gid while it talks to it.
 *
 * Thread safety: not thread-safe (changes the effective uid for a moment).
 */
#ifndef VMP_ATTACH_H
#define VMP_ATTACH_H

#include <stddef.h>
#include <sys/types.h>

/** Check that process `pid` exists and is a HotSpot JVM (libjvm.so mapped).
 *  @return 0, or -1 with a one-line reason in `msg` (no trailing newline). */
int vmp_attach_check(pid_t pid, char *msg, size_t msg_size);

/** Ask JVM `pid` to load the agent library at absolute path `agent` with
 *  `options`, and wait for Agent_OnAttach to return (at most about 10 s for the
 *  JVM to start listening, then as long as the agent takes).
 *  @param[out] agent_rc  Agent_OnAttach's return value when the JVM ran it.
 *  @return 0 when Agent_OnAttach ran (whatever it returned: see agent_rc), or
 *          -1 with a one-line reason in `msg` (not a JVM, attach disabled,
 *          permission, the JVM could not load the library, it exited). */
int vmp_attach_load(pid_t pid, const char *agent, const char *options, int *agent_rc, char *msg,
                    size_t msg_size);

#endif
