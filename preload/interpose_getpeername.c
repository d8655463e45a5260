/* preload/interpose_getpeername.c — getpeername(2): a tunneled fd reports the inet
 * address the program connected to. */
#include <sys/socket.h>

#include "shim_names.h"
#include "shim_symbols.h"

int getpeername(int fd, __SOCKADDR_ARG addr, socklen_t *__restrict len)
{
    int rc;

    if (shim_names_get(fd, SHIM_NAME_PEER, addr.__sockaddr__, len, &rc))
        return rc;
    return shim_real()->getpeername(fd, addr.__sockaddr__, len);
}
