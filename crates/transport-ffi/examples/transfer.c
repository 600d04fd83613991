/*
 * transfer.c: publish a file's bytes with a producer socket and fetch them back with a
 * consumer socket, through the forwarder (the C example of include/nameway.h).
 *
 *   transfer TRANSPORT NAME FILE [SIGN KEY PUBKEY MANIFEST]
 *
 * Prints the versioned name and "ok <bytes>" when what was received equals what was sent;
 * exits 1 with the socket's error otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nameway.h"

static int fail(const char *what, nw_socket *s) {
    fprintf(stderr, "transfer: %s: %s\n", what, nw_strerror(s));
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 4 && argc != 8) {
        fprintf(stderr, "usage: %s TRANSPORT NAME FILE [SIGN KEY PUBKEY MANIFEST]\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[3], "rb");
    if (!f) {
        perror(argv[3]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *sent = malloc(size > 0 ? (size_t)size : 1);
    if (fread(sent, 1, (size_t)size, f) != (size_t)size) {
        perror("fread");
        return 1;
    }
    fclose(f);

    nw_socket *p = nw_socket_new(NW_PRODUCER);
    if (nw_setopt(p, NW_OPT_TRANSPORT, argv[1]) < 0) return fail("setopt", p);
    if (argc == 8) {
        if (nw_setopt(p, NW_OPT_SIGN, argv[4]) < 0) return fail("sign", p);
        if (nw_setopt(p, NW_OPT_KEY, argv[5]) < 0) return fail("key", p);
        if (nw_setopt(p, NW_OPT_MANIFEST, argv[7]) < 0) return fail("manifest", p);
    }
    if (nw_bind(p, argv[2]) < 0) return fail("bind", p);
    if (nw_send(p, sent, (size_t)size) != size) return fail("send", p);
    printf("%s\n", nw_name(p));

    nw_socket *c = nw_socket_new(NW_CONSUMER);
    if (nw_setopt(c, NW_OPT_TRANSPORT, argv[1]) < 0) return fail("setopt", c);
    if (argc == 8 && nw_setopt(c, NW_OPT_KEY, argv[6]) < 0) return fail("key", c);
    if (nw_connect(c, argv[2]) < 0) return fail("connect", c);
    char *got = malloc((size_t)size + 1);
    size_t total = 0;
    char buf[65536];
    for (;;) {
        ssize_t n = nw_recv(c, buf, sizeof buf);
        if (n < 0) return fail("recv", c);
        if (n == 0) break;
        if (total + (size_t)n > (size_t)size) {
            fprintf(stderr, "transfer: received more than was sent\n");
            return 1;
        }
        memcpy(got + total, buf, (size_t)n);
        total += (size_t)n;
    }
    if (total != (size_t)size || memcmp(sent, got, total) != 0) {
        fprintf(stderr, "transfer: received %zu bytes that differ from the %ld sent\n", total, size);
        return 1;
    }
    printf("ok %zu\n", total);
    nw_close(c);
    nw_close(p);
    free(sent);
    free(got);
    return 0;
}
