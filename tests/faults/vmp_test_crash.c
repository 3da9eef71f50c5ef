/* SPDX-License-Identifier: MIT
 *
 * vmp_test_crash.c - the JNI functions of Crash.java: a write through a NULL
 * pointer, and abort().
 */
#include <jni.h>
#include <stdlib.h>

JNIEXPORT void JNICALL Java_Crash_nullWrite(JNIEnv *env, jclass cls);
JNIEXPORT void JNICALL Java_Crash_callAbort(JNIEnv *env, jclass cls);

JNIEXPORT void JNICALL Java_Crash_nullWrite(JNIEnv *env, jclass cls)
{
    volatile int *volatile p = NULL;
    (void)env;
    (void)cls;
    *p = 42;
}

JNIEXPORT void JNICALL Java_Crash_callAbort(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    abort();
}
