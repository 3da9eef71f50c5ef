/* SPDX-License-Identifier: MIT
 *
 * vmp_jvmti_methods.c - the HotSpot agent's methods, classes and compiled
 * code: FUNCTION records from JVMTI (spec.md §5.5), the code cache's
 * nmethods and stubs as code objects with their maps (§5.7, §5.10).
 */
#include "vmp_jvmti_int.h"

/* ---- JVMTI helpers ---------------------------------------------------------- */

void vmp_jvmti__jfree(void *p)
{
    if (p != NULL)
        (*vmp_jv.jvmti)->Deallocate(vmp_jv.jvmti, (unsigned char *)p);
}

/* "Ljava/lang/String;" -> "java.lang.String" (malloc'd), NULL for other types. */
static char *java_class_name(const char *sig)
{
    size_t len, i;
    char *out;

    if (sig == NULL || sig[0] != 'L')
        return NULL;
    len = strlen(sig);
    if (len < 3 || sig[len - 1] != ';')
        return NULL;
    out = malloc(len - 1);
    if (out == NULL)
        return NULL;
    for (i = 1; i < len - 1; i++)
        out[i - 1] = sig[i] == '/' ? '.' : sig[i];
    out[len - 2] = '\0';
    return out;
}

static int line_cmp(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Write the FUNCTION record of `m` unless it was written before.  `scope`
 * and `file` describe its class (either may be NULL). */
static void define_method(jmethodID m, const char *scope, const char *file)
{
    jvmtiEnv *j = vmp_jv.jvmti;
    char *name = NULL, *sig = NULL;
    jvmtiLineNumberEntry *tbl = NULL;
    jint n_tbl = 0, k;
    jlocation lo = 0, hi = -1;
    uint32_t *lines = NULL;
    vmp_function fn;
    vmp_writer *need[N_OUTPUTS]; /* the outputs that lack it */
    int n_need = 0, i, k2;

    if (m == NULL)
        return;
    pthread_mutex_lock(&vmp_jv.lock);
    for (i = 0; i < N_OUTPUTS; i++) {
        output *o = vmp_jv_outputs[i];
        if (o->w != NULL && vmp_jvmti__idset_add(&o->functions, (uint64_t)(uintptr_t)m) == 1)
            need[n_need++] = o->w;
    }
    pthread_mutex_unlock(&vmp_jv.lock);
    if (n_need == 0)
        return;

    memset(&fn, 0, sizeof fn);
    fn.id = (uint64_t)(uintptr_t)m;
    fn.scope = scope;
    fn.file = file;
    if ((*j)->GetMethodName(j, m, &name, &sig, NULL) == JVMTI_ERROR_NONE) {
        fn.name = name;
        fn.signature = sig;
    }
    if ((*j)->GetLineNumberTable(j, m, &n_tbl, &tbl) == JVMTI_ERROR_NONE && n_tbl > 0) {
        lines = malloc((size_t)n_tbl * 2 * sizeof *lines);
        if (lines != NULL) {
            uint32_t first = UINT32_MAX;
            for (k = 0; k < n_tbl; k++) {
                lines[2 * k] = tbl[k].start_location < 0 ? 0 : (uint32_t)tbl[k].start_location;
                lines[2 * k + 1] = tbl[k].line_number < 0 ? 0 : (uint32_t)tbl[k].line_number;
                if (lines[2 * k + 1] != 0 && lines[2 * k + 1] < first)
                    first = lines[2 * k + 1];
            }
            qsort(lines, (size_t)n_tbl, 2 * sizeof *lines, line_cmp);
            fn.lines = lines;
            fn.n_lines = (size_t)n_tbl;
            fn.first_line = first == UINT32_MAX ? 0 : first;
        }
    }
    if ((*j)->GetMethodLocation(j, m, &lo, &hi) == JVMTI_ERROR_NONE && lo == 0 && hi >= 0 &&
        hi < (jlocation)UINT32_MAX)
        fn.bytecode_size = (uint32_t)hi + 1;

    /* to the outputs that lacked it and are still open (a loop may have
     * moved the next file to out, or closed out, meanwhile) */
    pthread_mutex_lock(&vmp_jv.lock);
    for (i = 0; i < N_OUTPUTS; i++) {
        for (k2 = 0; k2 < n_need; k2++) {
            if (vmp_jv_outputs[i]->w != NULL && vmp_jv_outputs[i]->w == need[k2])
                vmp_jvmti__check_write(vmp_writer_function(vmp_jv_outputs[i]->w, &fn));
        }
    }
    pthread_mutex_unlock(&vmp_jv.lock);

    free(lines);
    vmp_jvmti__jfree(tbl);
    vmp_jvmti__jfree(name);
    vmp_jvmti__jfree(sig);
}

/* Describe a class: Java name and source file (each malloc'd or NULL). */
static void class_info(jclass klass, char **name_out, char **file_out)
{
    jvmtiEnv *j = vmp_jv.jvmti;
    char *sig = NULL, *src = NULL;

    *name_out = NULL;
    *file_out = NULL;
    if ((*j)->GetClassSignature(j, klass, &sig, NULL) == JVMTI_ERROR_NONE)
        *name_out = java_class_name(sig);
    if ((*j)->GetSourceFileName(j, klass, &src) == JVMTI_ERROR_NONE && src != NULL)
        *file_out = strdup(src);
    vmp_jvmti__jfree(sig);
    vmp_jvmti__jfree(src);
}

/* Define every method of a prepared class.  GetClassMethods also makes
 * HotSpot allocate the jmethodIDs that AsyncGetCallTrace needs. */
void vmp_jvmti__define_class(jclass klass)
{
    jvmtiEnv *j = vmp_jv.jvmti;
    jint n = 0, k, status = 0;
    jmethodID *methods = NULL;
    char *name, *file;

    if ((*j)->GetClassStatus(j, klass, &status) != JVMTI_ERROR_NONE ||
        (status & (JVMTI_CLASS_STATUS_PREPARED | JVMTI_CLASS_STATUS_ARRAY |
                   JVMTI_CLASS_STATUS_PRIMITIVE)) != JVMTI_CLASS_STATUS_PREPARED)
        return;
    if ((*j)->GetClassMethods(j, klass, &n, &methods) != JVMTI_ERROR_NONE)
        return;
    class_info(klass, &name, &file);
    for (k = 0; k < n; k++)
        define_method(methods[k], name, file);
    free(name);
    free(file);
    vmp_jvmti__jfree(methods);
}

/* Define `m` if it is not yet: a method first seen in compiled code. */
void vmp_jvmti__define_method_lazily(JNIEnv *jni, jmethodID m)
{
    jvmtiEnv *j = vmp_jv.jvmti;
    jclass klass = NULL;
    char *name, *file;
    int known = 1, i;

    if (m == NULL)
        return;
    pthread_mutex_lock(&vmp_jv.lock);
    for (i = 0; i < N_OUTPUTS; i++) {
        if (vmp_jv_outputs[i]->w != NULL &&
            !vmp_jvmti__idset_has(&vmp_jv_outputs[i]->functions, (uint64_t)(uintptr_t)m))
            known = 0;
    }
    pthread_mutex_unlock(&vmp_jv.lock);
    if (known || (*j)->GetMethodDeclaringClass(j, m, &klass) != JVMTI_ERROR_NONE)
        return;
    class_info(klass, &name, &file);
    define_method(m, name, file);
    free(name);
    free(file);
    if (jni != NULL && klass != NULL)
        (*jni)->DeleteLocalRef(jni, klass);
}

/* "java.lang.String.hashCode" (malloc'd) or NULL. */
static char *method_display_name(jmethodID m)
{
    jvmtiEnv *j = vmp_jv.jvmti;
    jclass klass = NULL;
    char *mname = NULL, *cname = NULL, *file = NULL, *out = NULL;

    if ((*j)->GetMethodName(j, m, &mname, NULL, NULL) != JVMTI_ERROR_NONE)
        return NULL;
    if ((*j)->GetMethodDeclaringClass(j, m, &klass) == JVMTI_ERROR_NONE)
        class_info(klass, &cname, &file);
    if (cname != NULL) {
        size_t len = strlen(cname) + strlen(mname) + 2;
        out = malloc(len);
        if (out != NULL)
            snprintf(out, len, "%s.%s", cname, mname);
    } else {
        out = strdup(mname);
    }
    free(cname);
    free(file);
    vmp_jvmti__jfree(mname);
    return out;
}

/* ---- Code objects (spec.md §5.7, §5.10) --------------------------------------- */

/* Add a code object to output `o`; frees whatever it overlaps first
 * (R-GEN-4).  Called with vmp_jv.lock held.  A repeat of a live object
 * (GenerateEvents replays code already reported) is ignored. */
static void add_code_to(output *o, vmp_code_object *co, uint64_t tag)
{
    const vmp_jvmti_code *same;
    vmp_jvmti_code c;
    uint64_t ids[16];
    size_t n, i;

    if (o->w == NULL || co->size == 0)
        return;
    same = vmp_jvmti__codemap_at(&o->code, co->start);
    if (same != NULL && same->size == co->size && same->tag == tag)
        return;
    while ((n = vmp_jvmti__codemap_overlaps(&o->code, ids, 16, co->start, co->size)) > 0) {
        for (i = 0; i < n && i < 16; i++) {
            vmp_jvmti__check_write(vmp_writer_code_free(o->w, ids[i], NULL));
            vmp_jvmti__codemap_remove(&o->code, ids[i]);
        }
    }
    c.start = co->start;
    c.size = co->size;
    c.id = co->id = ++vmp_jv.next_code_id;
    c.tag = tag;
    co->zone = o->zone;
    vmp_jvmti__check_write(vmp_writer_code_add(o->w, co));
    vmp_jvmti__codemap_insert(&o->code, &c);
}

/* add_code_to() every output.  With vmp_jv.lock held. */
static void add_code_locked(vmp_code_object *co, uint64_t tag)
{
    int i;
    for (i = 0; i < N_OUTPUTS; i++)
        add_code_to(vmp_jv_outputs[i], co, tag);
}

void JNICALL vmp_jvmti__on_compiled_method_load(jvmtiEnv *jvmti, jmethodID method, jint code_size,
                                                const void *code_addr, jint map_length,
                                                const jvmtiAddrLocationMap *map,
                                                const void *compile_info)
{
    const jvmtiCompiledMethodLoadRecordHeader *h;
    vmp_jvmti_debuginfo d;
    vmp_code_object co;
    char *name;
    uint64_t start = (uint64_t)(uintptr_t)code_addr;

    (void)jvmti;
    if (code_size <= 0)
        return;
    /* Methods inlined into this one may belong to classes not seen yet. */
    vmp_jvmti__define_method_lazily(NULL, method);
    for (h = compile_info; h != NULL; h = h->next) {
        if (h->kind == JVMTI_CMLR_INLINE_INFO) {
            const jvmtiCompiledMethodLoadInlineRecord *r = (const void *)h;
            jint p, k;
            for (p = 0; p < r->numpcs; p++) {
                for (k = 0; k < r->pcinfo[p].numstackframes; k++)
                    vmp_jvmti__define_method_lazily(NULL, r->pcinfo[p].methods[k]);
            }
        }
    }
    if (vmp_jvmti__debuginfo_build(&d, start, (uint64_t)code_size, map, map_length, compile_info,
                                   (uint64_t)(uintptr_t)method) != 0)
        memset(&d, 0, sizeof d);
    /* The method names the code (R-RES-2); its own name only when every
     * record is kept (metadata=all), as before FUNCTION records came lazily */
    name = vmp_jv.opts.all_metadata ? method_display_name(method) : NULL;

    memset(&co, 0, sizeof co);
    co.kind = KIND_NMETHOD;
    co.name = name;
    co.function = (uint64_t)(uintptr_t)method;
    co.start = start;
    co.size = (uint64_t)code_size;
    co.pc_map = d.pairs;
    co.pc_map_len = d.n_pairs;
    co.inlines = d.inlines;
    co.n_inlines = d.n_inlines;
    pthread_mutex_lock(&vmp_jv.lock);
    add_code_locked(&co, (uint64_t)(uintptr_t)method);
    pthread_mutex_unlock(&vmp_jv.lock);
    free(name);
    vmp_jvmti__debuginfo_free(&d);
}

void JNICALL vmp_jvmti__on_compiled_method_unload(jvmtiEnv *jvmti, jmethodID method,
                                                  const void *code_addr)
{
    const vmp_jvmti_code *c;
    int i;

    (void)jvmti;
    pthread_mutex_lock(&vmp_jv.lock);
    for (i = 0; i < N_OUTPUTS; i++) {
        output *o = vmp_jv_outputs[i];
        c = vmp_jvmti__codemap_at(&o->code, (uint64_t)(uintptr_t)code_addr);
        /* The method check skips a late unload of code already replaced. */
        if (o->w != NULL && c != NULL && c->tag == (uint64_t)(uintptr_t)method) {
            uint64_t id = c->id;
            vmp_jvmti__check_write(vmp_writer_code_free(o->w, id, NULL));
            vmp_jvmti__check_write(
                vmp_writer_event(o->w, EVT_CODE_UNLOAD, 0, 0, 0, (int64_t)id, NULL));
            vmp_jvmti__codemap_remove(&o->code, id);
        }
    }
    pthread_mutex_unlock(&vmp_jv.lock);
}

static uint32_t stub_kind(const char *name)
{
    if (name == NULL)
        return KIND_STUB;
    if (strcmp(name, "Interpreter") == 0)
        return KIND_INTERPRETER;
    if (strstr(name, "adapter") != NULL || strstr(name, "Adapter") != NULL ||
        strstr(name, "I2C") != NULL || strstr(name, "C2I") != NULL)
        return KIND_ADAPTER;
    return KIND_STUB;
}

void JNICALL vmp_jvmti__on_dynamic_code_generated(jvmtiEnv *jvmti, const char *name,
                                                  const void *address, jint length)
{
    vmp_code_object co;

    (void)jvmti;
    if (length <= 0)
        return;
    memset(&co, 0, sizeof co);
    co.kind = stub_kind(name);
    co.name = name;
    co.start = (uint64_t)(uintptr_t)address;
    co.size = (uint64_t)length;
    pthread_mutex_lock(&vmp_jv.lock);
    add_code_locked(&co, 0);
    pthread_mutex_unlock(&vmp_jv.lock);
}

/* ---- Classes ------------------------------------------------------------------ */

void JNICALL vmp_jvmti__on_class_load(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
    /* Enabled only because AsyncGetCallTrace refuses to walk stacks
     * (ticks_no_class_load) unless some agent receives ClassLoad events. */
    (void)jvmti;
    (void)jni;
    (void)thread;
    (void)klass;
}

void JNICALL vmp_jvmti__on_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
    (void)jvmti;
    (void)jni;
    (void)thread;
    vmp_jvmti__define_class(klass);
}
