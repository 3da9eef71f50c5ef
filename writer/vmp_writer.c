/* SPDX-License-Identifier: MIT
 *
 * vmp_writer.c - the writer's clock and record queue; open, flush and close
 * (spec.md §3, §5, §6).  The drain and the background thread are in
 * vmp_drain.c, the code and metadata records in vmp_writer_code.c.
 *
 * Data flow.  The sample path (vmp_sample.c) fills ring slots.  The metadata
 * functions encode their records at once, under meta_mu, into the record
 * queue; each queued record carries a *stamp*: the ring head (the number of
 * sample slots claimed so far) read under meta_mu.  A drain (background
 * thread, flush, close) merges both streams into chunks:
 *
 *   1. H = ring head;
 *   2. take the whole record queue;
 *   3. for each queued record with stamp S: write the published samples at
 *      positions < S, then the record;
 *   4. write the published samples at positions < H.
 *
 * Ordering.  A record whose call returned before a sample was taken has a
 * stamp <= that sample's position, so it is written first; and a drain that
 * sees the sample's slot (position < H, H read before the queue was taken)
 * also sees the record in the queue.  Generation changes read the stamp
 * before they increment the generation, and the sample path loads the
 * generation before it claims its slot (both sequentially consistent), so a
 * sample that carries a new generation is written after the change's record.
 *
 * Determinism.  The merge order depends only on the order of the calls, not
 * on when drains run, and chunks close only on size, flush and close when the
 * age limit is off: one thread making the same calls with a deterministic
 * clock gets the same bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vmp_format.h"
#include "vmp_writer_int.h"

#define DEFAULT_CHUNK_BYTES (1u << 20)
#define DEFAULT_AGE_MS      1000u
#define DEFAULT_LEVEL       3
#define DEFAULT_SLOTS       8192u
#define DEFAULT_DEPTH       128u
#define MAX_DEPTH_LIMIT     65536u
#define MAX_SAMPLE_KINDS    256u /* kinds a writer declares (spec R-KND-1) */
#define MIN_CHUNK_BYTES     256u
/* samples of a SAMPLE_BLOCK at most (sample_blocks) */
#define BLOCK_SAMPLES 1024u
/* END has at most 8 uint fields: bounded by 2 + 8 * (1 + 9) bytes. */
#define END_MAX_BYTES 96u

uint64_t vmp_writer__now(const vmp_writer *w)
{
    uint64_t now = w->clock ? w->clock(w->clock_ud) : vmp_chunk__mono_ns();
    return now > w->origin ? now - w->origin : 0;
}

/* A value of the writer's clock, as ns since the time origin. */
uint64_t vmp_writer__from_clock(const vmp_writer *w, uint64_t raw)
{
    return raw > w->origin ? raw - w->origin : 0;
}

/* ---- the record queue ---------------------------------------------------- */

vmp_status vmp_writer__meta_lock(vmp_writer *w, uint64_t *stamp_out, size_t *mark_out)
{
    pthread_mutex_lock(&w->meta_mu);
    if (atomic_load(&w->stopped)) {
        pthread_mutex_unlock(&w->meta_mu);
        return VMP_ERR_CLOSED;
    }
    *stamp_out = atomic_load(&w->ring.head);
    *mark_out = w->queue.len;
    return VMP_OK;
}

size_t vmp_writer__entry_begin(vmp_writer *w, uint64_t stamp)
{
    size_t at = w->queue.len;
    uint32_t len = 0;
    vmp_buf__append(&w->queue, &stamp, sizeof stamp);
    vmp_buf__append(&w->queue, &len, sizeof len);
    return at;
}

void vmp_writer__entry_end(vmp_writer *w, size_t at)
{
    if (w->queue.failed)
        return;
    uint32_t len = (uint32_t)(w->queue.len - at - sizeof(uint64_t) - sizeof(uint32_t));
    memcpy(w->queue.data + at + sizeof(uint64_t), &len, sizeof len);
}

void vmp_writer__queue_record(vmp_writer *w, uint64_t stamp, const vmp_record *rec)
{
    size_t at = vmp_writer__entry_begin(w, stamp);
    vmp_record_encode(&w->queue, rec, 0);
    vmp_writer__entry_end(w, at);
}

vmp_str vmp_writer__str(const char *s)
{
    vmp_str v = {s ? s : "", s ? strlen(s) : 0};
    return v;
}

vmp_status vmp_writer__meta_unlock(vmp_writer *w, size_t mark, vmp_status st)
{
    if (w->queue.failed || st < 0) {
        w->queue.len = mark;
        if (w->queue.failed)
            st = VMP_ERR_NOMEM;
        w->queue.failed = 0;
    }
    pthread_mutex_unlock(&w->meta_mu);
    return st;
}

/* ---- open ------------------------------------------------------------------ */

static void enc_str_array(vmp_rec *r, unsigned key, const char *const *v, size_t n)
{
    if (!v || n == 0)
        return;
    vmp_rec__key(r, key);
    vmp_enc__array(r->b, n);
    for (size_t i = 0; i < n; i++)
        vmp_enc__tstr(r->b, v[i]);
}

static void encode_header(vmp_writer *w, const vmp_writer_meta *m, const vmp_writer_options *o,
                          uint64_t realtime)
{
    static const vmp_writer_meta none;
    if (!m)
        m = &none;
    vmp_rec r;
    w->scratch.len = 0;
    vmp_rec__begin(&r, &w->scratch, VMP_REC_HEADER);
    vmp_rec__tstr_ne(&r, VMP_HDR_PRODUCER, VMP_WRITER_PRODUCER);
    vmp_rec__tstr_ne(&r, VMP_HDR_VM_NAME, m->vm_name);
    vmp_rec__tstr_ne(&r, VMP_HDR_VM_VERSION, m->vm_version);
    vmp_rec__uint(&r, VMP_HDR_PID, m->pid ? m->pid : (uint64_t)getpid());
    vmp_rec__uint_nz(&r, VMP_HDR_START_REALTIME, realtime);
    const char *clock_name = o->clock_name ? o->clock_name : o->clock ? "custom" : "monotonic";
    vmp_rec__tstr_ne(&r, VMP_HDR_CLOCK, clock_name);
    if (!o->clock) {
        struct timespec res;
        if (clock_getres(CLOCK_MONOTONIC, &res) == 0)
            vmp_rec__uint_nz(&r, VMP_HDR_CLOCK_RES,
                             (uint64_t)res.tv_sec * 1000000000u + (uint64_t)res.tv_nsec);
    }
    vmp_rec__uint_nz(&r, VMP_HDR_INTERVAL, m->sample_interval_ns);
    vmp_rec__uint(&r, VMP_HDR_POINTER_SIZE, sizeof(void *));
    enc_str_array(&r, VMP_HDR_STATES, m->states, m->n_states);
    enc_str_array(&r, VMP_HDR_CODE_KINDS, m->code_kinds, m->n_code_kinds);
    enc_str_array(&r, VMP_HDR_TIERS, m->tiers, m->n_tiers);
    enc_str_array(&r, VMP_HDR_EVENT_KINDS, m->event_kinds, m->n_event_kinds);
    enc_str_array(&r, VMP_HDR_COUNTER_KINDS, m->counter_kinds, m->n_counter_kinds);
    enc_str_array(&r, VMP_HDR_FAILURE_REASONS, m->failure_reasons, m->n_failure_reasons);
    if (m->labels && m->n_labels) {
        vmp_rec__key(&r, VMP_HDR_LABELS);
        vmp_enc__map(&w->scratch, m->n_labels);
        for (size_t i = 0; i < 2 * m->n_labels; i++)
            vmp_enc__tstr(&w->scratch, m->labels[i]);
    }
    vmp_rec__uint(&r, VMP_HDR_START_MONOTONIC, w->origin);
    vmp_rec__tstr_ne(&r, VMP_HDR_NAME_SEPARATOR, m->name_separator);
    if (w->sample_blocks && w->time_unit > 1)
        vmp_rec__uint(&r, VMP_HDR_SAMPLE_TIME_UNIT, w->time_unit);
    if (w->n_sample_kinds > 0) { /* spec R-KND-1 */
        enc_str_array(&r, VMP_HDR_SAMPLE_KINDS, o->sample_kinds, w->n_sample_kinds);
        if (o->sample_units) {
            vmp_rec__key(&r, VMP_HDR_SAMPLE_UNITS);
            vmp_enc__array(&w->scratch, w->n_sample_kinds);
            for (size_t i = 0; i < w->n_sample_kinds; i++)
                vmp_enc__tstr(&w->scratch, o->sample_units[i] ? o->sample_units[i] : "count");
        }
    }
    vmp_rec__end(&r);
}

static void free_writer(vmp_writer *w)
{
    if (w->cctx)
        ZSTD_freeCCtx(w->cctx);
    vmp_ring__free(&w->ring);
    vmp_intern__free(&w->intern);
    vmp_fnstore__free(&w->fns);
    vmp_mapstore__free(&w->maps);
    vmp_buf__free(&w->map_rec);
    vmp_buf__free(&w->map_fns);
    vmp_buf__free(&w->fn_copy);
    while (w->symtabs) {
        vmp_symtab *next = w->symtabs->next;
        vmp_symtab__free(w->symtabs);
        w->symtabs = next;
    }
    vmp_buf__free(&w->sym_items);
    vmp_buf__free(&w->queue);
    vmp_buf__free(&w->work);
    vmp_buf__free(&w->scratch);
    vmp_buf__free(&w->chunk);
    vmp_block__free(&w->block);
    vmp_buf__free(&w->block_buf);
    vmp_buf__free(&w->zbuf);
    vmp_buf__free(&w->seek);
    free(w->loaded_keys);
    pthread_mutex_destroy(&w->loaded_mu);
    pthread_mutex_destroy(&w->meta_mu);
    pthread_mutex_destroy(&w->out_mu);
    pthread_mutex_destroy(&w->wake_mu);
    pthread_cond_destroy(&w->wake_cv);
    free(w);
}

/* spec R-KND-1: kinds named, not "cpu", none twice; format 2 only */
static int valid_kinds(const vmp_writer_options *o)
{
    if (o->version < 2 || o->n_sample_kinds == 0)
        return 1;
    if (!o->sample_kinds || o->format_major == 1 || o->n_sample_kinds > MAX_SAMPLE_KINDS)
        return 0;
    for (size_t i = 0; i < o->n_sample_kinds; i++) {
        const char *k = o->sample_kinds[i];
        if (!k || !*k || strcmp(k, "cpu") == 0)
            return 0;
        for (size_t j = 0; j < i; j++)
            if (strcmp(k, o->sample_kinds[j]) == 0)
                return 0;
    }
    return 1;
}

static vmp_status open_impl(vmp_writer **out, int fd, int own_fd, const vmp_writer_meta *meta,
                            const vmp_writer_options *opts)
{
    static const vmp_writer_options defaults = VMP_WRITER_OPTIONS_INIT;
    if (!opts)
        opts = &defaults;
    if (opts->version < 1 || (opts->max_depth > MAX_DEPTH_LIMIT) || opts->format_major > 2 ||
        (meta && ((meta->n_states && !meta->states) || (meta->n_labels && !meta->labels))) ||
        !valid_kinds(opts))
        return VMP_ERR_INVALID_ARG;

    /* The ring's head and tail sit on their own cache lines (_Alignas(64)). */
    size_t wsize = (sizeof(vmp_writer) + 63u) & ~(size_t)63u;
    vmp_writer *w = aligned_alloc(_Alignof(vmp_writer), wsize);
    if (!w)
        return VMP_ERR_NOMEM;
    memset(w, 0, wsize);
    pthread_mutex_init(&w->meta_mu, NULL);
    pthread_mutex_init(&w->loaded_mu, NULL);
    pthread_mutex_init(&w->out_mu, NULL);
    pthread_mutex_init(&w->wake_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->wake_cv, &ca);
    pthread_condattr_destroy(&ca);

    w->fd = fd;
    w->own_fd = own_fd;
    w->chunk_bytes = opts->chunk_bytes ? opts->chunk_bytes : DEFAULT_CHUNK_BYTES;
    if (w->chunk_bytes < MIN_CHUNK_BYTES)
        w->chunk_bytes = MIN_CHUNK_BYTES;
    w->chunk_age_ms = opts->chunk_age_ms ? opts->chunk_age_ms : DEFAULT_AGE_MS;
    w->zstd_level = opts->zstd_level ? opts->zstd_level : DEFAULT_LEVEL;
    w->no_seek_table = opts->no_seek_table;
    w->lazy_functions = opts->lazy_functions != 0;
    w->lazy_symbols = opts->lazy_symbols != 0;
    w->lazy_code_maps = opts->lazy_code_maps != 0;
    w->sample_blocks = opts->format_major != 1;
    if (opts->version >= 2 && opts->n_sample_kinds > 0)
        w->n_sample_kinds = (uint32_t)opts->n_sample_kinds;
    if (opts->sample_time_unit_ns)
        w->time_unit = opts->sample_time_unit_ns;
    else /* below 10 us, a microsecond would lose the sampler's resolution */
        w->time_unit = meta && meta->sample_interval_ns >= 10000 ? 1000 : 1;
    w->clock = opts->clock;
    w->clock_ud = opts->clock_ud;
    w->next_zone_id = 1;
    w->next_module_id = 1;
    atomic_init(&w->generation, 0);

    vmp_status st = VMP_ERR_NOMEM;
    uint32_t slots = opts->ring_slots ? opts->ring_slots : DEFAULT_SLOTS;
    uint32_t depth = opts->max_depth ? opts->max_depth : DEFAULT_DEPTH;
    if (slots > (1u << 24))
        slots = 1u << 24;
    if (vmp_ring__init(&w->ring, slots, depth) < 0 || vmp_intern__init(&w->intern) < 0)
        goto fail;
    w->cctx = ZSTD_createCCtx();
    if (!w->cctx)
        goto fail;
    if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, w->zstd_level)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_contentSizeFlag, 1))) {
        st = VMP_ERR_INVALID_ARG;
        goto fail;
    }
    if (vmp_buf__reserve(&w->chunk, w->chunk_bytes + 1024) < 0 ||
        vmp_buf__reserve(&w->zbuf, ZSTD_compressBound(w->chunk_bytes + 1024)) < 0 ||
        vmp_buf__reserve(&w->scratch, 4096) < 0 || vmp_buf__reserve(&w->queue, 4096) < 0 ||
        vmp_buf__reserve(&w->work, 4096) < 0 ||
        (w->sample_blocks && vmp_block__init(&w->block, BLOCK_SAMPLES) < 0))
        goto fail;

    /* The time origin (spec R-HDR-5).  A custom clock gives no wall-clock
     * anchor: start_realtime stays 0 so that such files are reproducible. */
    uint64_t realtime = 0;
    if (w->clock) {
        w->origin = w->clock(w->clock_ud);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        w->origin = vmp_chunk__mono_ns();
        realtime = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    }

    off_t pos = lseek(fd, 0, SEEK_CUR);
    w->base_offset = pos > 0 ? (uint64_t)pos : 0;

    /* spec R-HDR-1, R-HDR-2, R-HDR-4: the file header frame */
    uint8_t hdr[VMP_FILE_FRAME_BYTES];
    /* 2.0 for SAMPLE_BLOCK records (spec R-BLK-4); else the least minor of
     * 1 the file needs: 1.2 for CODE_MAP records, 1.1 for its name
     * separator */
    if (w->sample_blocks)
        vmp_enc__file_frame(hdr, 2, w->n_sample_kinds > 0 ? 1 : 0);
    else
        vmp_enc__file_frame(hdr, 1,
                            w->lazy_code_maps                                       ? 2
                            : meta && meta->name_separator && *meta->name_separator ? 1
                                                                                    : 0);
    if (vmp_chunk__write(w, hdr, sizeof hdr) < 0) {
        st = VMP_ERR_IO;
        goto fail;
    }

    /* spec R-HDR-5: HEADER is the first record of the first chunk */
    encode_header(w, meta, opts, realtime);
    if (w->scratch.failed)
        goto fail;
    vmp_chunk__add(w, w->scratch.data, w->scratch.len);

    /* The background thread takes no signals: a sampling signal must land on
     * a VM thread. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&w->thread, NULL, vmp_writer__background, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        goto fail;
    w->thread_started = 1;
    *out = w;
    return VMP_OK;
fail:
    free_writer(w);
    return st;
}

vmp_status vmp_writer_open_fd(vmp_writer **out, int fd, const vmp_writer_meta *meta,
                              const vmp_writer_options *opts)
{
    if (!out || fd < 0)
        return VMP_ERR_INVALID_ARG;
    return open_impl(out, fd, 0, meta, opts);
}

/* Open `path` for writing as vmp_writer_open() promises: the last component
 * not followed if a symlink, a file there truncated only if it is a regular
 * file of one link that the effective user owns, `mode` set on it; a
 * character device (/dev/null) written as it is.  `*created`: 1 when the
 * file is new.  Returns the descriptor, or -1 with errno set (nothing
 * truncated). */
static int create_file(const char *path, mode_t mode, int *created)
{
    /* O_NONBLOCK: a FIFO planted at the path must not block the open */
    const int flags = O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    int fd = open(path, flags | O_CREAT | O_EXCL, mode);
    struct stat st;
    int err = 0;
    *created = fd >= 0;
    if (fd < 0 && errno == EEXIST) /* a symlink too: then ELOOP */
        fd = open(path, flags);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0)
        err = errno;
    else if (S_ISCHR(st.st_mode)) /* /dev/null; only root makes devices */
        ;
    else if (!S_ISREG(st.st_mode))
        err = EINVAL;
    else if (st.st_uid != geteuid() || st.st_nlink != 1)
        err = EPERM;
    else if (fchmod(fd, mode) != 0 || ftruncate(fd, 0) != 0)
        err = errno;
    if (err == 0 && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)
        err = errno;
    if (err != 0) {
        close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

vmp_status vmp_writer_open(vmp_writer **out, const char *path, const vmp_writer_meta *meta,
                           const vmp_writer_options *opts)
{
    unsigned int mode = VMP_WRITER_DEFAULT_FILE_MODE;
    if (!out || !path)
        return VMP_ERR_INVALID_ARG;
    if (opts && opts->version >= 3 && opts->file_mode != 0)
        mode = opts->file_mode;
    if (mode > 0777)
        return VMP_ERR_INVALID_ARG;
    int created;
    int fd = create_file(path, (mode_t)mode, &created);
    if (fd < 0)
        return VMP_ERR_IO;
    vmp_status st = open_impl(out, fd, 1, meta, opts);
    if (st < 0) {
        /* a file this call created and could not fill (a full disk) goes,
         * unless another took its place meanwhile */
        struct stat mine, there;
        int err = errno;
        if (created && fstat(fd, &mine) == 0 && lstat(path, &there) == 0 &&
            mine.st_dev == there.st_dev && mine.st_ino == there.st_ino)
            unlink(path);
        close(fd);
        errno = err;
    }
    return st;
}

/* ---- flush and close ------------------------------------------------------ */

static vmp_status output_status(vmp_writer *w, vmp_status st)
{
    if (atomic_load(&w->stopped)) {
        if (!w->io_reported) {
            w->io_reported = 1;
            return VMP_ERR_IO;
        }
        return VMP_ERR_CLOSED;
    }
    return st < 0 ? st : VMP_OK;
}

vmp_status vmp_writer_flush(vmp_writer *w)
{
    if (!w)
        return VMP_ERR_INVALID_ARG;
    pthread_mutex_lock(&w->out_mu);
    vmp_writer__drain(w, 1);
    vmp_status st = output_status(w, vmp_chunk__close(w));
    pthread_mutex_unlock(&w->out_mu);
    return st;
}

static void write_end(vmp_writer *w)
{
    vmp_chunk__flush_block(w);
    if (w->chunk.len > 0 && w->chunk.len + END_MAX_BYTES > w->chunk_bytes)
        vmp_chunk__close(w);
    if (atomic_load(&w->stopped))
        return;
    /* spec R-END-1: counts of the file, including the END's own chunk */
    vmp_record rec = {.type = VMP_REC_END};
    rec.u.end = (vmp_rec_end){
        .time_ns = vmp_writer__now(w),
        .samples = atomic_load(&w->samples_written) + w->chunk_samples,
        .dropped_full = atomic_load(&w->dropped_full),
        .dropped_write = atomic_load(&w->dropped_write) + atomic_load(&w->dropped_stopped),
        .failed = atomic_load(&w->failed_written) + w->chunk_failed,
        .chunks = atomic_load(&w->chunks),
        .truncated_stacks = atomic_load(&w->truncated_stacks) + w->chunk_truncated,
        .generation = atomic_load(&w->generation),
        .kind_samples = atomic_load(&w->kind_written) + w->chunk_kind_samples};
    w->scratch.len = 0;
    vmp_record_encode(&w->scratch, &rec, 0);
    if (!w->scratch.failed)
        vmp_chunk__add(w, w->scratch.data, w->scratch.len);
    vmp_chunk__close(w);
}

vmp_status vmp_writer_close(vmp_writer *w, vmp_writer_totals *totals_out)
{
    if (!w) {
        if (totals_out)
            memset(totals_out, 0, sizeof *totals_out);
        return VMP_OK;
    }
    if (w->thread_started) {
        pthread_mutex_lock(&w->wake_mu);
        w->stop = 1;
        pthread_cond_signal(&w->wake_cv);
        pthread_mutex_unlock(&w->wake_mu);
        pthread_join(w->thread, NULL);
    }
    pthread_mutex_lock(&w->out_mu);
    vmp_writer__drain(w, 1);
    vmp_status st = VMP_OK;
    if (!atomic_load(&w->stopped)) {
        write_end(w);
        if (!w->no_seek_table && !atomic_load(&w->stopped))
            vmp_chunk__seek_table(w);
    }
    /* Samples claimed but never published (a producer still inside the
     * sample path at close) cannot be written. */
    uint64_t head = atomic_load(&w->ring.head);
    if (head > w->ring.tail)
        atomic_fetch_add(&w->dropped_write, head - w->ring.tail);
    if (atomic_load(&w->write_errno) != 0)
        st = VMP_ERR_IO;
    pthread_mutex_unlock(&w->out_mu);
    vmp_writer_stats(w, totals_out);
    if (w->own_fd && close(w->fd) != 0 && st == VMP_OK)
        st = VMP_ERR_IO;
    free_writer(w);
    return st;
}
