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

static struct {
    int ok;
    uint64_t anchor; /* JavaThread::_anchor */
    uint64_t sp;     /* JavaFrameAnchor::_last_Java_sp */
    uint64_t pc;     /* JavaFrameAnchor::_last_Java_pc */
    intptr_t env;    /* a JNIEnv's address minus its JavaThread's */
} off;

static int sym_u64(const char *name, uint64_t *out)
{
    const uint64_t *p = (const uint64_t *)dlsym(RTLD_DEFAULT, name);
    if (p == NULL)
        return 0;
    *out = *p;
    return 1;
}

/* The JavaThread of `thread` (java.lang.Thread.eetop) into *out. */
static int eetop_of(JNIEnv *jni, jthread thread, uintptr_t *out)
{
    jclass cls;
    jfieldID eetop;

    *out = 0;
    if (jni == NULL || thread == NULL)
        return 0;
    cls = (*jni)->GetObjectClass(jni, thread);
    eetop = cls ? (*jni)->GetFieldID(jni, cls, "eetop", "J") : NULL;
    if (eetop != NULL)
        *out = (uintptr_t)(*jni)->GetLongField(jni, thread, eetop);
    if ((*jni)->ExceptionCheck(jni))
        (*jni)->ExceptionClear(jni);
    if (cls != NULL)
        (*jni)->DeleteLocalRef(jni, cls);
    return *out != 0;
}

int vmp_jvmti__anchor_init(JNIEnv *jni, jthread thread)
{
    uintptr_t java_thread;
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
    if (found == 7 && eetop_of(jni, thread, &java_thread) && java_thread != 0) {
        off.env = (intptr_t)jni - (intptr_t)java_thread;
        off.ok = off.env > 0 && off.env < 65536;
    }
    return off.ok;
}

int vmp_jvmti__anchor_make_walkable(JNIEnv *env, uint64_t sp, uint64_t stack_hi)
{
    uintptr_t t = (uintptr_t)env - (uintptr_t)off.env;
    volatile uintptr_t *sp_p, *pc_p;
    uintptr_t last_sp;
    uint64_t ret;

    if (env == NULL || !off.ok)
        return 0;
    sp_p = (volatile uintptr_t *)(t + off.anchor + off.sp);
    pc_p = (volatile uintptr_t *)(t + off.anchor + off.pc);
    last_sp = *sp_p;
    if (last_sp == 0 || *pc_p != 0 || last_sp < sizeof(uintptr_t))
        return 0;
    if (!vmp_jvmti__unwind_read(sp, stack_hi, last_sp - sizeof(uintptr_t), &ret) || ret == 0)
        return 0;
    *pc_p = (uintptr_t)ret;
    return 1;
}

void vmp_jvmti__anchor_restore(JNIEnv *env)
{
    uintptr_t t = (uintptr_t)env - (uintptr_t)off.env;
    if (env != NULL && off.ok)
        *(volatile uintptr_t *)(t + off.anchor + off.pc) = 0;
}
