/* SPDX-License-Identifier: BSD-3-Clause */
/* common/sd_fsm.h — a lifecycle's table of allowed state changes, checked in one place: a
 * module keeps its state in one enum, lists beside it the changes it makes, and changes it
 * only through one function of its own that asks sd_fsm_check first. No I/O beside the log
 * line, so the function is tested directly. */
#ifndef SMBDIRECT_SD_FSM_H
#define SMBDIRECT_SD_FSM_H

#define SD_FSM_TO(s) (1u << (s))

struct sd_fsm {
    const char *what;          /* names the object in the log line, e.g. "verbs: connection" */
    unsigned states;           /* the enum's count: states are 0 .. states - 1 */
    const unsigned *next;      /* by state: the SD_FSM_TO bits of the states it may become */
    const char *const *names;  /* by state */
};

/* The state's name, "?" when there is no such state. */
const char *sd_fsm_name(const struct sd_fsm *f, unsigned s);
/* Whether from -> to is a change the table lists: 0 (logged at debug), or -1 (logged as an
 * error: the caller has a bug, and keeps its state). */
int sd_fsm_check(const struct sd_fsm *f, unsigned from, unsigned to);
/* The same for one of many objects: its number (>= 0) follows f->what in the log lines
 * ("bridge fd 7: OPEN -> FINISHING"). */
int sd_fsm_check_id(const struct sd_fsm *f, int id, unsigned from, unsigned to);

#endif
