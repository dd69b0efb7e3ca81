/* A C client of the arena: connects with a connect token, plays for a few
 * seconds (runs forward, turning slowly) predicting its own player, then
 * disconnects.
 *
 * Build (from the workspace root, after `cargo build -p hightick-client-ffi-arena`):
 *   cc -std=c11 -Wall -Wextra -I crates/client-ffi-arena/include \
 *      crates/client-ffi-arena/c/play.c target/debug/libhightick_arena_client.a \
 *      -lpthread -ldl -lm -lrt -o play
 * Run with: ./play TOKEN_FILE SECONDS   (TOKEN_FILE: the 2048-byte connect token)
 *
 * It prints what it saw as `key value` lines (snapshots, events, welcome,
 * moved, rtt_ms, predicted_moved, prediction_gap_median_m, ...) and exits 0
 * if it connected, received snapshots and closed cleanly. Every call is
 * checked; a failure prints the library's last error. */

#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

#include "hightick_arena_client.h"

#define MAX_ENTITIES 256
#define MAX_EVENTS 64
/* Inputs are sent for a few ticks ahead of the server's estimate, so they
 * arrive before the tick they are for. */
#define INPUT_LEAD_TICKS 6
/* Other entities are drawn this many ticks in the past, between snapshots. */
#define INTERPOLATION_TICKS 3.0
/* Frames whose prediction gap is kept, for its median. */
#define MAX_GAPS 8192
/* The match's map: what the player's movement is predicted on. */
#define STAGE "dust_corners"

static uint64_t now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

static int by_value(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static float distance3(const float a[3], const float b[3]) {
    float dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    return sqrtf(dx * dx + dy * dy + dz * dz);
}

static void sleep_us(long us) {
    struct timespec t = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&t, NULL);
}

/* Prints the call's status and the last error; returns nonzero on error. */
static int failed(const char *call, HightickStatus status) {
    if (status >= 0) {
        return 0;
    }
    char text[HIGHTICK_LAST_ERROR_BYTES + 1];
    if (hightick_last_error(text, sizeof text, NULL) != HIGHTICK_STATUS_OK) {
        text[0] = '\0';
    }
    fprintf(stderr, "%s: %s (%d): %s\n", call, hightick_status_text(status), (int)status, text);
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s TOKEN_FILE SECONDS\n", argv[0]);
        return 2;
    }
    if (hightick_abi_version() != HIGHTICK_ABI_VERSION) {
        fprintf(stderr, "library ABI %u, header ABI %u\n", hightick_abi_version(),
                (unsigned)HIGHTICK_ABI_VERSION);
        return 2;
    }
    uint8_t token[4096];
    FILE *f = fopen(argv[1], "rb");
    if (f == NULL) {
        perror(argv[1]);
        return 2;
    }
    size_t token_len = fread(token, 1, sizeof token, f);
    fclose(f);
    double seconds = atof(argv[2]);

    HightickConfig config;
    if (failed("config_default", hightick_config_default(&config))) {
        return 1;
    }
    HightickClient client = 0;
    if (failed("connect", hightick_connect(token, token_len, &config, now_us(), &client))) {
        return 1;
    }
    /* Our own player moves at once with our input, corrected by the server. */
    if (failed("prediction_start", hightick_prediction_start(client, STAGE))) {
        return 1;
    }
    /* Corrections fade out (0.8 of one is left after a tick, the default);
     * 0 would draw them at once. */
    if (failed("prediction_smoothing", hightick_prediction_smoothing(client, 0.8f))) {
        return 1;
    }

    static HightickArenaEntity entities[MAX_ENTITIES];
    HightickArenaEvent events[MAX_EVENTS];
    uint64_t snapshots = 0, events_seen = 0;
    long me = -1;
    int have_start = 0;
    float start[3] = {0}, last[3] = {0};
    uint32_t last_tick_sent = 0;
    int ok = 1;
    /* The predicted (drawn) position: first, newest, and its distance from
     * the interpolated one each frame both are known. */
    static float gaps[MAX_GAPS];
    size_t n_gaps = 0;
    uint64_t predicted_frames = 0;
    int predicted_finite = 1, entity_matches = 1;
    float predicted_start[3] = {0}, predicted_last[3] = {0};

    uint64_t end = now_us() + (uint64_t)(seconds * 1e6);
    while (now_us() < end) {
        uint64_t now = now_us();
        if (failed("update", hightick_update(client, now))) {
            ok = 0;
            break;
        }
        size_t n = 0;
        HightickStatus s;
        while ((s = hightick_poll_events(client, events, MAX_EVENTS, &n)) == HIGHTICK_STATUS_OK) {
            for (size_t i = 0; i < n; i++) {
                events_seen++;
                if (events[i].kind == HIGHTICK_ARENA_EVENT_WELCOME) {
                    me = events[i].player;
                }
            }
            if (n < MAX_EVENTS) {
                break;
            }
        }
        if (failed("poll_events", s)) {
            ok = 0;
            break;
        }
        HightickSnapshotInfo info;
        s = hightick_poll_snapshot(client, &info, entities, MAX_ENTITIES, &n);
        if (failed("poll_snapshot", s)) {
            ok = 0;
            break;
        }
        if (s == HIGHTICK_STATUS_OK) {
            snapshots++;
        }
        HightickTickSync sync;
        s = hightick_tick_sync(client, &sync);
        if (failed("tick_sync", s)) {
            ok = 0;
            break;
        }
        if (s == HIGHTICK_STATUS_OK) {
            if (me >= 0) {
                HightickArenaEntity body;
                double render = sync.server_tick - INTERPOLATION_TICKS;
                if (hightick_entity(client, (uint32_t)me, render, &body) == HIGHTICK_STATUS_OK &&
                    (body.has & HIGHTICK_ARENA_HAS_TRANSFORM)) {
                    if (!have_start) {
                        for (int k = 0; k < 3; k++) start[k] = body.position[k];
                        have_start = 1;
                    }
                    for (int k = 0; k < 3; k++) last[k] = body.position[k];
                    HightickPrediction predicted;
                    s = hightick_prediction(client, &predicted);
                    if (failed("prediction", s)) {
                        ok = 0;
                        break;
                    }
                    if (s == HIGHTICK_STATUS_OK) {
                        for (int k = 0; k < 3; k++) {
                            predicted_finite &= isfinite(predicted.position[k]) != 0;
                            if (predicted_frames == 0) predicted_start[k] = predicted.position[k];
                            predicted_last[k] = predicted.position[k];
                        }
                        predicted_frames++;
                        if (n_gaps < MAX_GAPS) {
                            gaps[n_gaps++] = distance3(predicted.position, body.position);
                        }
                        HightickArenaEntity own;
                        s = hightick_predicted_entity(client, &own);
                        if (failed("predicted_entity", s)) {
                            ok = 0;
                            break;
                        }
                        entity_matches &= s == HIGHTICK_STATUS_OK && own.id == me &&
                                          memcmp(own.position, predicted.position,
                                                 sizeof own.position) == 0;
                    }
                }
            }
            uint32_t tick = (uint32_t)sync.server_tick + INPUT_LEAD_TICKS;
            if (tick > last_tick_sent) {
                HightickArenaInput input = {0};
                input.move_y = 127;
                input.yaw = (float)(tick % 1024) * 0.01f;
                double aim = sync.server_tick - INTERPOLATION_TICKS;
                s = hightick_send_input(client, tick, aim > 0 ? (uint32_t)aim : 0, &input);
                if (s != HIGHTICK_STATUS_NOT_CONNECTED && failed("send_input", s)) {
                    ok = 0;
                    break;
                }
                last_tick_sent = tick;
            }
        }
        sleep_us(4000);
    }

    HightickStats stats;
    HightickPredictionStats prediction;
    HightickConnection before, after;
    /* The entity the engine says this player steers: the Welcome's body. */
    uint32_t avatar = 0;
    HightickStatus held = hightick_avatar(client, &avatar);
    if (failed("avatar", held) ||
        failed("stats", hightick_stats(client, &stats)) ||
        failed("prediction_stats", hightick_prediction_stats(client, &prediction)) ||
        failed("connection", hightick_connection(client, &before)) ||
        failed("disconnect", hightick_disconnect(client)) ||
        failed("connection", hightick_connection(client, &after)) ||
        failed("close", hightick_close(client))) {
        return 1;
    }
    /* The handle is gone: calls with it are refused, never a crash. */
    if (hightick_update(client, now_us()) != HIGHTICK_STATUS_CLOSED) {
        fprintf(stderr, "update on a closed handle was not refused\n");
        return 1;
    }
    double dx = last[0] - start[0], dz = last[2] - start[2];
    printf("snapshots %llu\n", (unsigned long long)snapshots);
    printf("snapshots_applied %llu\n", (unsigned long long)stats.snapshots_applied);
    printf("events %llu\n", (unsigned long long)events_seen);
    printf("inputs_sent %llu\n", (unsigned long long)stats.inputs_sent);
    printf("welcome %ld\n", me);
    printf("avatar %ld\n", held == HIGHTICK_STATUS_OK ? (long)avatar : -1L);
    printf("moved %.3f\n", sqrt(dx * dx + dz * dz));
    printf("rtt_ms %.3f\n", stats.rtt_ms);
    printf("jitter_ms %.3f\n", stats.jitter_ms);
    printf("snapshot_age_ms %.3f\n", stats.snapshot_age_ms);
    qsort(gaps, n_gaps, sizeof gaps[0], by_value);
    printf("predicted_frames %llu\n", (unsigned long long)predicted_frames);
    printf("predicted_finite %d\n", predicted_finite);
    printf("predicted_moved %.3f\n", distance3(predicted_start, predicted_last));
    printf("predicted_entity_matches %d\n", entity_matches && predicted_frames > 0);
    printf("prediction_gap_median_m %.3f\n", n_gaps > 0 ? gaps[n_gaps / 2] : -1.0);
    printf("prediction_gap_max_m %.3f\n", n_gaps > 0 ? gaps[n_gaps - 1] : -1.0);
    printf("prediction_compared %llu\n", (unsigned long long)prediction.compared);
    printf("prediction_mispredicted %llu\n", (unsigned long long)prediction.mispredicted);
    printf("prediction_max_correction_m %.3f\n", prediction.max_correction_m);
    printf("connected_before_disconnect %d\n", before.state == HIGHTICK_STATE_CONNECTED);
    printf("closed_locally %d\n", after.state == HIGHTICK_STATE_DISCONNECTED &&
                                       after.reason == HIGHTICK_REASON_CLOSED_LOCALLY);
    return ok && snapshots > 0 && before.state == HIGHTICK_STATE_CONNECTED ? 0 : 1;
}
