/* SPDX-License-Identifier: MIT
 *
 * vmp_test_faults.c - the JNI functions of Faults.java: a write through a
 * NULL pointer, abort(), a SIGPROF handler of the program's own, and native
 * threads the JVM does not know (named vmp-nat-N) that each burn CPU once.
 */
#include <jni.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

JNIEXPORT void JNICALL Java_Faults_nullWrite(JNIEnv *env, jclass cls);
JNIEXPORT void JNICALL Java_Faults_callAbort(JNIEnv *env, jclass cls);
JNIEXPORT void JNICALL Java_Faults_takeSigprof(JNIEnv *env, jclass cls);
JNIEXPORT jint JNICALL Java_Faults_startNative(JNIEnv *env, jclass cls, jint n, jlong spin_ns);
JNIEXPORT void JNICALL Java_Faults_runNative(JNIEnv *env, jclass cls);
JNIEXPORT void JNICALL Java_Faults_endNative(JNIEnv *env, jclass cls);

/* ---- native threads ---- */

static pthread_mutex_t native_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t native_cv = PTHREAD_COND_INITIALIZER;
static int native_go, native_end, native_started, native_done;
static uint64_t native_spin_ns;
static volatile uint64_t native_sink;

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *native_main(void *arg)
{
    char name[16];
    uint64_t t0, x = (uint64_t)(uintptr_t)arg;
    snprintf(name, sizeof name, "vmp-nat-%u", (unsigned)(uintptr_t)arg);
    pthread_setname_np(pthread_self(), name);
    pthread_mutex_lock(&native_mu);
    native_started++;
    pthread_cond_broadcast(&native_cv);
    while (!native_go)
        pthread_cond_wait(&native_cv, &native_mu);
    pthread_mutex_unlock(&native_mu);
    for (t0 = thread_cpu_ns(); thread_cpu_ns() - t0 < native_spin_ns;)
        x = x * 6364136223846793005u + 1442695040888963407u;
    native_sink = x;
    pthread_mutex_lock(&native_mu);
    native_done++;
    pthread_cond_broadcast(&native_cv);
    while (!native_end)
        pthread_cond_wait(&native_cv, &native_mu);
    pthread_mutex_unlock(&native_mu);
    return NULL;
}

/* Start `n` native threads that wait; @return how many started. */
JNIEXPORT jint JNICALL Java_Faults_startNative(JNIEnv *env, jclass cls, jint n, jlong spin_ns)
{
    pthread_attr_t attr;
    int made = 0;
    (void)env;
    (void)cls;
    native_spin_ns = (uint64_t)spin_ns;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (jint i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, &attr, native_main, (void *)(uintptr_t)i) == 0)
            made++;
    }
    pthread_attr_destroy(&attr);
    pthread_mutex_lock(&native_mu);
    while (native_started < made)
        pthread_cond_wait(&native_cv, &native_mu);
    pthread_mutex_unlock(&native_mu);
    return made;
}

/* Let every native thread burn its CPU; return when all have. */
JNIEXPORT void JNICALL Java_Faults_runNative(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    pthread_mutex_lock(&native_mu);
    native_go = 1;
    pthread_cond_broadcast(&native_cv);
    while (native_done < native_started)
        pthread_cond_wait(&native_cv, &native_mu);
    pthread_mutex_unlock(&native_mu);
}

JNIEXPORT void JNICALL Java_Faults_endNative(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    pthread_mutex_lock(&native_mu);
    native_end = 1;
    pthread_cond_broadcast(&native_cv);
    pthread_mutex_unlock(&native_mu);
}

static volatile sig_atomic_t sigprof_seen;

static void own_sigprof(int sig)
{
    (void)sig;
    sigprof_seen++;
}

JNIEXPORT void JNICALL Java_Faults_takeSigprof(JNIEnv *env, jclass cls)
{
    struct sigaction sa;
    (void)env;
    (void)cls;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = own_sigprof;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPROF, &sa, NULL);
}

JNIEXPORT void JNICALL Java_Faults_nullWrite(JNIEnv *env, jclass cls)
{
    volatile int *volatile p = NULL;
    (void)env;
    (void)cls;
    *p = 42;
}

JNIEXPORT void JNICALL Java_Faults_callAbort(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    abort();
}
