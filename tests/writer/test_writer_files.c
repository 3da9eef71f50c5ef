/* SPDX-License-Identifier: MIT
 *
 * test_writer_files.c - the file vmp_writer_open() writes is safe in a
 * directory others can write to (/tmp): a symlink planted at the path is
 * not followed, a FIFO does not block, another user's file and a hard link
 * are not truncated, and the file gets mode 0600 (or the asked mode),
 * whatever the umask and whatever mode a file already there had; a file it
 * created and could not write is removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmp_test.h"
#include "vmp_writer.h"

static const char victim_text[] = "not a profile: must stay as it is\n";

static void write_victim(const char *path)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(victim_text, f);
        fclose(f);
    }
}

static int victim_intact(const char *path)
{
    char buf[128] = "";
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    return strcmp(buf, victim_text) == 0;
}

static unsigned mode_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (unsigned)(st.st_mode & 07777) : 0xffffu;
}

/* open with `o`, expect `want`; close what opened.  @return the errno left */
static int try_open(const char *path, const vmp_writer_options *o, vmp_status want)
{
    vmp_writer *w = NULL;
    errno = 0;
    vmp_status st = vmp_writer_open(&w, path, NULL, o);
    int err = errno;
    CHECK(st == want);
    if (st == VMP_OK)
        CHECK(vmp_writer_close(w, NULL) == VMP_OK);
    else
        CHECK(w == NULL);
    return err;
}

static void test_symlink_not_followed(void)
{
    unlink("files_link.vmp");
    write_victim("files_victim.txt");
    CHECK(symlink("files_victim.txt", "files_link.vmp") == 0);
    CHECK(try_open("files_link.vmp", NULL, VMP_ERR_IO) == ELOOP);
    CHECK(victim_intact("files_victim.txt"));
    /* a dangling one: its target is not created */
    unlink("files_link.vmp");
    unlink("files_absent.txt");
    CHECK(symlink("files_absent.txt", "files_link.vmp") == 0);
    CHECK(try_open("files_link.vmp", NULL, VMP_ERR_IO) == ELOOP);
    CHECK(access("files_absent.txt", F_OK) != 0);
    unlink("files_link.vmp");
}

static void test_hard_link_not_truncated(void)
{
    unlink("files_hard.vmp");
    write_victim("files_victim.txt");
    CHECK(link("files_victim.txt", "files_hard.vmp") == 0);
    CHECK(try_open("files_hard.vmp", NULL, VMP_ERR_IO) == EPERM);
    CHECK(victim_intact("files_victim.txt"));
    unlink("files_hard.vmp");
}

static void test_fifo_refused_without_blocking(void)
{
    unlink("files_fifo.vmp");
    CHECK(mkfifo("files_fifo.vmp", 0600) == 0);
    /* no reader: the open must neither block nor succeed */
    int err = try_open("files_fifo.vmp", NULL, VMP_ERR_IO);
    CHECK(err == ENXIO || err == EINVAL);
    /* a reader there: still refused (a FIFO others planted would read it) */
    int rd = open("files_fifo.vmp", O_RDONLY | O_NONBLOCK);
    CHECK(rd >= 0);
    CHECK(try_open("files_fifo.vmp", NULL, VMP_ERR_IO) == EINVAL);
    if (rd >= 0)
        close(rd);
    unlink("files_fifo.vmp");
}

static void test_other_users_file_not_truncated(void)
{
    if (geteuid() != 0) {
        printf("  (not root: another user's file is not tried)\n");
        return;
    }
    /* root writing into a shared directory where a user planted a file */
    write_victim("files_foreign.vmp");
    CHECK(chmod("files_foreign.vmp", 0666) == 0);
    CHECK(chown("files_foreign.vmp", 65534, 65534) == 0);
    CHECK(try_open("files_foreign.vmp", NULL, VMP_ERR_IO) == EPERM);
    CHECK(victim_intact("files_foreign.vmp"));
    CHECK(mode_of("files_foreign.vmp") == 0666);
    unlink("files_foreign.vmp");
}

static void test_modes(void)
{
    mode_t old = umask(0);
    /* new file: 0600 even with umask 0 */
    unlink("files_mode.vmp");
    try_open("files_mode.vmp", NULL, VMP_OK);
    CHECK_EQ_U64(mode_of("files_mode.vmp"), 0600);
    /* a file of ours with mode 0666 already there: truncated, now 0600 */
    CHECK(chmod("files_mode.vmp", 0666) == 0);
    try_open("files_mode.vmp", NULL, VMP_OK);
    CHECK_EQ_U64(mode_of("files_mode.vmp"), 0600);
    /* asked 0644 under umask 077: 0644 */
    umask(077);
    vmp_writer_options o = VMP_WRITER_OPTIONS_INIT;
    o.file_mode = 0644;
    unlink("files_mode.vmp");
    try_open("files_mode.vmp", &o, VMP_OK);
    CHECK_EQ_U64(mode_of("files_mode.vmp"), 0644);
    /* options of version 2 (no file_mode field read): 0600 */
    o.version = 2;
    o.file_mode = 0666;
    try_open("files_mode.vmp", &o, VMP_OK);
    CHECK_EQ_U64(mode_of("files_mode.vmp"), 0600);
    /* set-id bits and the like: invalid, nothing created */
    o.version = VMP_WRITER_OPTIONS_VERSION;
    o.file_mode = 04755;
    unlink("files_mode.vmp");
    try_open("files_mode.vmp", &o, VMP_ERR_INVALID_ARG);
    CHECK(access("files_mode.vmp", F_OK) != 0);
    umask(old);
}

/* A file it created and could not write its header to (a full disk; here
 * RLIMIT_FSIZE 0) is removed; one that was there stays. */
static void test_unfilled_file_removed(void)
{
    struct rlimit old, none;
    signal(SIGXFSZ, SIG_IGN);
    getrlimit(RLIMIT_FSIZE, &old);
    none = old;
    none.rlim_cur = 0;
    unlink("files_full.vmp");
    CHECK(setrlimit(RLIMIT_FSIZE, &none) == 0);
    CHECK(try_open("files_full.vmp", NULL, VMP_ERR_IO) == EFBIG);
    setrlimit(RLIMIT_FSIZE, &old);
    CHECK(access("files_full.vmp", F_OK) != 0);
    /* one of ours there already: truncated, and left (empty) */
    write_victim("files_full.vmp");
    CHECK(setrlimit(RLIMIT_FSIZE, &none) == 0);
    try_open("files_full.vmp", NULL, VMP_ERR_IO);
    setrlimit(RLIMIT_FSIZE, &old);
    CHECK(access("files_full.vmp", F_OK) == 0);
    unlink("files_full.vmp");
    signal(SIGXFSZ, SIG_DFL);
}

static void test_character_device(void)
{
    unsigned before = mode_of("/dev/null");
    try_open("/dev/null", NULL, VMP_OK);
    CHECK_EQ_U64(mode_of("/dev/null"), before);
}

int main(void)
{
    VMP_TEST_RUN(test_symlink_not_followed);
    VMP_TEST_RUN(test_hard_link_not_truncated);
    VMP_TEST_RUN(test_fifo_refused_without_blocking);
    VMP_TEST_RUN(test_other_users_file_not_truncated);
    VMP_TEST_RUN(test_modes);
    VMP_TEST_RUN(test_unfilled_file_removed);
    VMP_TEST_RUN(test_character_device);
    VMP_TEST_EXIT();
}
