/* report.c - formats measurements as a table and as CSV. */
#include "report.h"

#include <math.h>
#include <string.h>

static const char csv_header[] =
    "device,cc,step,slug,M,N,K,reps,cut_short,ms_mean,ms_median,ms_min,ms_max,gflops,"
    "gflops_median,cublas_ms_mean,cublas_gflops,ratio,rel_err,check,sm_clock_mhz,mem_clock_mhz,"
    "power_w,energy_mj,throttle,cublas_sm_clock_mhz,cublas_power_w,cublas_energy_mj,exact,err_max_u,"
    "err_rms,cublas_err_max_u,cublas_err_rms,seq_err_max_u,seq_err_rms,precision\n";

const char *report_csv_header(void) { return csv_header; }

/* The column names, after `lead` (the rung's column in the ladder's table, or nothing). */
static void column_names(FILE *f, const char *lead)
{
    fprintf(f, "%s%6s %6s %6s %5s %9s %9s %9s %6s %7s %5s %7s %8s %8s %8s %5s\n", lead, "M", "N",
            "K", "reps", "ms", "GFLOP/s", "cuBLAS", "ratio", "spread", "exact", "err u",
            "cuBLAS u", "rms", "cuB rms", "check");
}

void report_table_header(FILE *f, const struct run_info *info)
{
    fprintf(f, "rung %02d %s on %s (cc %d.%d)\n", info->step, info->slug, info->device,
            info->cc / 10, info->cc % 10);
    column_names(f, "");
}

void report_ladder_header(FILE *f, const struct run_info *info)
{
    fprintf(f, "the ladder on %s (cc %d.%d): each point's inputs drawn once, every rung timed "
            "beside cuBLAS on them\n", info->device, info->cc / 10, info->cc % 10);
    column_names(f, "rung                          ");
}

static const char *pass_word(int pass) { return pass ? "PASS" : "FAIL"; }

void report_table_row(FILE *f, const struct point_result *p)
{
    const double g = gflops(p->m, p->n, p->k, p->rung.mean);
    const double gc = gflops(p->m, p->n, p->k, p->cublas.mean);
    const double spread = p->rung.median > 0 ? 100.0 * (p->rung.max - p->rung.min) / p->rung.median : 0;
    fprintf(f, "%6d %6d %6d %5d %9.4f %9.1f %9.1f %6.3f %6.1f%% %5s %7.2f %8.2f %8.1e %8.1e %5s%s\n",
            p->m, p->n, p->k, p->reps, p->rung.mean, g, gc, gc > 0 ? g / gc : 0.0, spread,
            pass_word(p->exact_pass), p->err.max_u, p->cublas_err.max_u, p->err.rms,
            p->cublas_err.rms, pass_word(p->pass && p->precision_pass),
            p->cut_short ? "  (cut short by --budget)" : "");
}

/* The device name without the CSV separator. */
static void csv_safe(const char *in, char *out, size_t outlen)
{
    size_t j = 0;
    for (size_t i = 0; in[i] && j + 1 < outlen; i++)
        if (in[i] != ',' && in[i] != '\n' && in[i] != '"')
            out[j++] = in[i];
    out[j] = '\0';
}

/* One telemetry field: empty when there was no sample or NVML did not report it. */
static void tel_field(FILE *f, int valid, const char *fmt, double v)
{
    fputc(',', f);
    if (valid && isfinite(v) && v > 0.0)
        fprintf(f, fmt, v);
}

static void tel_fields(FILE *f, const struct telemetry_sample *t, int with_mem_and_throttle)
{
    tel_field(f, t->valid, "%.0f", t->sm_clock_mhz);
    if (with_mem_and_throttle)
        tel_field(f, t->valid, "%.0f", t->mem_clock_mhz);
    tel_field(f, t->valid, "%.1f", t->power_w);
    tel_field(f, t->valid, "%.3f", t->energy_mj);
    if (with_mem_and_throttle) {
        fputc(',', f);
        if (t->valid)
            fprintf(f, "0x%llx", t->throttle);
    }
}

static const char anchors_header[] =
    "device,cc,M,N,K,cublas_gflops,cublas_err_max_u,cublas_err_rms,tf32_gflops,tf32_ratio,"
    "tf32_err_max_u,tf32_err_rms,x3_gflops,x3_ratio,x3_err_max_u,x3_err_rms\n";

const char *report_anchors_header(void) { return anchors_header; }

void report_anchor_lines(FILE *f, const struct point_result *p)
{
    if (!p->has_anchors)
        return;
    const double gc = gflops(p->m, p->n, p->k, p->cublas.mean);
    const struct {
        const char *name;
        const struct stats *t;
        const struct precision *e;
    } rows[2] = {{"cuBLAS TF32      ", &p->tf32, &p->tf32_err},
                 {"cuBLAS 3xTF32 (3)", &p->x3, &p->x3_err}};
    for (int i = 0; i < 2; i++) {
        const double g = gflops(p->m, p->n, p->k, rows[i].t->mean);
        fprintf(f, "       %s %9.4f ms %9.1f GFLOP/s %6.3fx SGEMM  err %.2f u, rms %.1e\n",
                rows[i].name, rows[i].t->mean, g, gc > 0 ? g / gc : 0.0, rows[i].e->max_u,
                rows[i].e->rms);
    }
}

/* A CSV row's start: the header first where the file is empty, the device name made safe for
 * a CSV field into dev. */
static void begin_row(FILE *f, const char *header, const struct run_info *info, char *dev,
                      size_t dev_size)
{
    csv_safe(info->device, dev, dev_size);
    if (fseek(f, 0, SEEK_END) == 0 && ftell(f) == 0)
        fputs(header, f);
}

int report_anchors_row(FILE *f, const struct run_info *info, const struct point_result *p)
{
    char dev[256];
    begin_row(f, anchors_header, info, dev, sizeof dev);
    const double gc = gflops(p->m, p->n, p->k, p->cublas.mean);
    const double gt = gflops(p->m, p->n, p->k, p->tf32.mean);
    const double gx = gflops(p->m, p->n, p->k, p->x3.mean);
    fprintf(f, "%s,%d,%d,%d,%d,%.1f,%.4g,%.4g,%.1f,%.4f,%.4g,%.4g,%.1f,%.4f,%.4g,%.4g\n", dev,
            info->cc, p->m, p->n, p->k, gc, p->cublas_err.max_u, p->cublas_err.rms, gt,
            gc > 0 ? gt / gc : 0.0, p->tf32_err.max_u, p->tf32_err.rms, gx,
            gc > 0 ? gx / gc : 0.0, p->x3_err.max_u, p->x3_err.rms);
    return ferror(f) ? -1 : 0;
}

int report_csv_row(FILE *f, const struct run_info *info, const struct point_result *p)
{
    char dev[256];
    begin_row(f, csv_header, info, dev, sizeof dev);
    const double g = gflops(p->m, p->n, p->k, p->rung.mean);
    const double gc = gflops(p->m, p->n, p->k, p->cublas.mean);
    fprintf(f, "%s,%d,%d,%s,%d,%d,%d,%d,%d,%.6f,%.6f,%.6f,%.6f,%.1f,%.1f,%.6f,%.1f,%.4f,%.3e,%s", dev,
            info->cc, info->step, info->slug, p->m, p->n, p->k, p->reps, p->cut_short, p->rung.mean,
            p->rung.median, p->rung.min, p->rung.max, g, gflops(p->m, p->n, p->k, p->rung.median),
            p->cublas.mean, gc, gc > 0 ? g / gc : 0.0, p->rel_err, p->pass ? "PASS" : "FAIL");
    tel_fields(f, &p->tel_rung, 1);
    tel_fields(f, &p->tel_cublas, 0);
    fprintf(f, ",%s,%.4g,%.4g,%.4g,%.4g,%.4g,%.4g,%s\n", pass_word(p->exact_pass), p->err.max_u,
            p->err.rms, p->cublas_err.max_u, p->cublas_err.rms, p->seq_err.max_u, p->seq_err.rms,
            pass_word(p->precision_pass));
    return ferror(f) ? -1 : 0;
}
