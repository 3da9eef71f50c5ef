/* SPDX-License-Identifier: MIT
 *
 * vmp_jvmti_anchor.c - making HotSpot's frame anchor walkable for one
 * AsyncGetCallTrace call (vmp_jvmti_anchor.h).
 */
#include "vmp_jvmti_anchor.h"

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "vmp_jvmti_unwind.h"

#define TLS_IE __attribute__((tls_model("initial-exec")))

static struct {
    int ok;
    uint64_t anchor; /* JavaThread::_anchor */
    uint64_t sp;     /* JavaFrameAnchor::_last_Java_sp */
    uint64_t pc;     /* JavaFrameAnchor::_last_Java_pc */
} off;

static __thread uintptr_t tls_java_thread TLS_IE; /* the JavaThread, 0 == none */

static int sym_u64(const char *name, uint64_t *out)
{
    const uint64_t *p = (const uint64_t *)dlsym(RTLD_DEFAULT, name);
    if (p == NULL)
        return 0;
    *out = *p;
    return 1;
}

int vmp_jvmti__anchor_init(void)
{
    char *const *table = (char *const *)dlsym(RTLD_DEFAULT, "gHotSpotVMStructs");
    uint64_t stride, type_off, field_off, offset_off;
    const char *e;
    int found = 0;

    if (table == NULL || *table == NULL || !sym_u64("gHotSpotVMStructEntryArrayStride", &stride) ||
        !sym_u64("gHotSpotVMStructEntryTypeNameOffset", &type_off) ||
        !sym_u64("gHotSpotVMStructEntryFieldNameOffset", &field_off) ||
        !sym_u64("gHotSpotVMStructEntryOffsetOffset", &offset_off) || stride == 0)
        return 0;
    for (e = *table;; e += stride) {
        const char *type, *field;
        uint64_t o;
        memcpy(&type, e + type_off, sizeof type);
        memcpy(&field, e + field_off, sizeof field);
        memcpy(&o, e + offset_off, sizeof o);
        if (type == NULL)
            break;
        if (field == NULL)
            continue;
        if (strcmp(type, "JavaThread") == 0 && strcmp(field, "_anchor") == 0)
            off.anchor = o, found |= 1;
        else if (strcmp(type, "JavaFrameAnchor") == 0 && strcmp(field, "_last_Java_sp") == 0)
            off.sp = o, found |= 2;
        else if (strcmp(type, "JavaFrameAnchor") == 0 && strcmp(field, "_last_Java_pc") == 0)
            off.pc = o, found |= 4;
    }
    off.ok = found == 7;
    return off.ok;
}

void vmp_jvmti__anchor_thread(JNIEnv *jni, jthread thread)
{
    jclass cls;
    jfieldID eetop;
    uintptr_t t = 0;

    if (jni != NULL && thread != NULL && off.ok) {
        cls = (*jni)->GetObjectClass(jni, thread);
        eetop = cls ? (*jni)->GetFieldID(jni, cls, "eetop", "J") : NULL;
        if (eetop != NULL)
            t = (uintptr_t)(*jni)->GetLongField(jni, thread, eetop);
        if ((*jni)->ExceptionCheck(jni))
            (*jni)->ExceptionClear(jni);
        if (cls != NULL)
            (*jni)->DeleteLocalRef(jni, cls);
    }
    tls_java_thread = t;
}

int vmp_jvmti__anchor_make_walkable(void)
{
    uintptr_t t = tls_java_thread;
    volatile uintptr_t *sp_p, *pc_p;
    uintptr_t sp;
    uint64_t ret;

    if (t == 0 || !off.ok)
        return 0;
    sp_p = (volatile uintptr_t *)(t + off.anchor + off.sp);
    pc_p = (volatile uintptr_t *)(t + off.anchor + off.pc);
    sp = *sp_p;
    if (sp == 0 || *pc_p != 0 || sp < sizeof(uintptr_t))
        return 0;
    if (!vmp_jvmti__unwind_read(sp - sizeof(uintptr_t), &ret) || ret == 0)
        return 0;
    *pc_p = (uintptr_t)ret;
    return 1;
}

void vmp_jvmti__anchor_restore(void)
{
    uintptr_t t = tls_java_thread;
    if (t != 0 && off.ok)
        *(volatile uintptr_t *)(t + off.anchor + off.pc) = 0;
}
