/*
 * nameway.h: BSD-like sockets for named objects, over Nameway's transport library.
 *
 * A producer socket publishes an object (bytes) under a name and serves it through the
 * forwarder; a consumer socket fetches a named object and reads it like a stream.
 *
 *   nw_socket *p = nw_socket_new(NW_PRODUCER);
 *   nw_setopt(p, NW_OPT_TRANSPORT, "unix:///run/nfd/nfd.sock");
 *   nw_bind(p, "/example/file");
 *   nw_send(p, buf, len);              // publishes a new version; served until nw_close
 *   printf("%s\n", nw_name(p));        // /example/file/v=...
 *
 *   nw_socket *c = nw_socket_new(NW_CONSUMER);
 *   nw_connect(c, "/example/file");    // the fetch starts (version discovered)
 *   while ((n = nw_recv(c, buf, sizeof buf)) > 0) ...;   // 0: complete and verified
 *   nw_close(c);
 *
 * Every call returns -1 (or NULL) on failure; nw_strerror(socket) then says why in one line.
 * Sockets are not thread-safe: use one from one thread at a time.
 */
#ifndef NAMEWAY_H
#define NAMEWAY_H

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nw_socket nw_socket;

/* Socket kinds. */
#define NW_PRODUCER 1
#define NW_CONSUMER 2

/* Options, set with nw_setopt before nw_bind / nw_connect; values are strings. */
#define NW_OPT_TRANSPORT 1  /* forwarder: unix:///path, tcp://host:port (default: as nameway) */
#define NW_OPT_SIGN      2  /* producer: digest (default), ed25519, ecdsa, rsa, hmac */
#define NW_OPT_KEY       3  /* producer: private key file; consumer: public key file */
#define NW_OPT_MANIFEST  4  /* producer: digests per manifest, "0" for per-packet signatures */
#define NW_OPT_PAYLOAD   5  /* producer: payload bytes per segment (default 4400) */
#define NW_OPT_CC        6  /* consumer: fixed, aimd, cubic (default) or delay */
#define NW_OPT_WINDOW    7  /* consumer: initial window in segments (the window for fixed), 1 or more, or "inf" */
#define NW_OPT_HMAC_KEY  8  /* consumer: HMAC secret file */

nw_socket *nw_socket_new(int kind);
int nw_setopt(nw_socket *s, int option, const char *value);
int nw_bind(nw_socket *s, const char *name);
int nw_connect(nw_socket *s, const char *name);
ssize_t nw_send(nw_socket *s, const void *buf, size_t len);
ssize_t nw_recv(nw_socket *s, void *buf, size_t len);
const char *nw_name(nw_socket *s);
const char *nw_strerror(nw_socket *s);
int nw_close(nw_socket *s);

#ifdef __cplusplus
}
#endif

#endif
