/* SPDX-License-Identifier: MIT
 *
 * vmp_test_native.c - a JNI library for the demo's threads and nshort modes:
 * threads the JVM does not know.  Demo.nativeSpin starts one, named
 * "vmp-native", which burns CPU for the given time; Demo.nativeShort starts
 * N such threads one after another.  Both return the CPU time those
 * threads used, in ns.
 */
#include <jni.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static volatile uint64_t sink;

static uint64_t ns_of(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A few small functions, so that the stacks have more than one frame. */
__attribute__((noinline)) static uint64_t native_mix(uint64_t x)
{
    int i;
    for (i = 0; i < 1000; i++)
        x = x * 6364136223846793005u + 1442695040888963407u;
    return x;
}

typedef struct spin_job {
    uint64_t micros; /* in: how long to burn CPU, in CPU time */
    char name[16];   /* in: the thread's name */
    uint64_t cpu_ns; /* out */
} spin_job;

static void *native_main(void *arg)
{
    spin_job *job = arg;
    uint64_t x = 1;

    pthread_setname_np(pthread_self(), job->name);
    while (ns_of(CLOCK_THREAD_CPUTIME_ID) < job->micros * 1000u)
        x = native_mix(x);
    sink = x;
    job->cpu_ns = ns_of(CLOCK_THREAD_CPUTIME_ID);
    return NULL;
}

/* Run `job` on a new thread and wait for it.  @return its CPU ns, or 0. */
static uint64_t run_job(spin_job *job)
{
    pthread_t t;
    if (pthread_create(&t, NULL, native_main, job) != 0)
        return 0;
    pthread_join(t, NULL);
    return job->cpu_ns;
}

JNIEXPORT jlong JNICALL Java_Demo_nativeSpin(JNIEnv *env, jclass cls, jlong millis);
JNIEXPORT jlong JNICALL Java_Demo_nativeShort(JNIEnv *env, jclass cls, jint n, jlong micros,
                                              jstring name);

JNIEXPORT jlong JNICALL Java_Demo_nativeSpin(JNIEnv *env, jclass cls, jlong millis)
{
    spin_job job = {millis > 0 ? (uint64_t)millis * 1000u : 0, "vmp-native", 0};
    (void)env;
    (void)cls;
    return (jlong)run_job(&job);
}

JNIEXPORT jlong JNICALL Java_Demo_nativeShort(JNIEnv *env, jclass cls, jint n, jlong micros,
                                              jstring name)
{
    const char *utf = (*env)->GetStringUTFChars(env, name, NULL);
    uint64_t sum = 0;
    jint i;

    (void)cls;
    for (i = 0; i < n && utf != NULL; i++) {
        spin_job job = {micros > 0 ? (uint64_t)micros : 0, "", 0};
        snprintf(job.name, sizeof job.name, "%s", utf);
        sum += run_job(&job);
    }
    if (utf != NULL)
        (*env)->ReleaseStringUTFChars(env, name, utf);
    return (jlong)sum;
}
