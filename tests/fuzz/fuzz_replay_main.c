/* SPDX-License-Identifier: MIT
 *
 * fuzz_replay_main.c - run a fuzz target over files and directories given on
 * the command line, so that every corpus and regression input is an ordinary
 * test under any compiler.  Exits 0 when every input ran; a target aborts on
 * a broken invariant.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path, unsigned *count)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return 1;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    size_t n;
    while (buf != NULL && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            uint8_t *grown = realloc(buf, cap * 2);
            if (grown == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf == NULL) {
        fprintf(stderr, "%s: out of memory\n", path);
        return 1;
    }
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    (*count)++;
    return 0;
}

static int run_path(const char *path, unsigned *count)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        perror(path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode))
        return run_file(path, count);
    DIR *d = opendir(path);
    if (d == NULL) {
        perror(path);
        return 1;
    }
    int failed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char child[4096];
        snprintf(child, sizeof child, "%s/%s", path, e->d_name);
        failed |= run_path(child, count);
    }
    closedir(d);
    return failed;
}

int main(int argc, char **argv)
{
    unsigned count = 0;
    int failed = 0;
    for (int i = 1; i < argc; i++)
        failed |= run_path(argv[i], &count);
    printf("replayed %u inputs\n", count);
    return failed;
}
