#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "rf_cpu.h"
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static uint64_t s=88172645463325252ull; static uint64_t rnd(void){s^=s<<13;s^=s>>7;s^=s<<17;return s;}
#define T(name, stmt) do{double t0=now(); stmt; printf("%-40s %8.3f s\n", name, now()-t0);}while(0)
int main(int argc,char**argv){
  int th=argc>1?atoi(argv[1]):2; int64_t n=10000000;
  rf_cpu_pool*pool; rf_cpu_pool_new(th,&pool);
  rf_cpu_kind k[3]={RF_CPU_I64,RF_CPU_I64,RF_CPU_F64}; rf_cpu_table t; rf_cpu_table_alloc(3,k,n,&t);
  int64_t*a=t.cols[0].data,*b=t.cols[1].data; double*c=t.cols[2].data;
  for(int64_t i=0;i<n;i++){a[i]=rnd()%1000000; b[i]=rnd()%4; c[i]=(double)(rnd()%100000)/7;}
  int32_t c0=0,c1=1,c2=2; int64_t*p,m; rf_cpu_groups g;
  T("sort 10M by i64 (1M values)", rf_cpu_sort_perm(pool,&t,&c0,NULL,1,&p)); free(p);
  T("sort 10M by f64", rf_cpu_sort_perm(pool,&t,&c2,NULL,1,&p)); free(p);
  int32_t kk[2]={1,0};
  T("sort 10M by (i64 small, i64)", rf_cpu_sort_perm(pool,&t,kk,NULL,2,&p)); free(p);
  T("top-10 of 10M by f64", rf_cpu_top_k(pool,&t,&c2,NULL,1,10,&p,&m)); free(p);
  T("group 10M into 4 groups", rf_cpu_group(pool,&t,&c1,1,&g));
  rf_dec128*sum; double*fs;
  T("  sum_i64 4 groups", rf_cpu_agg_sum_i64(pool,&g,a,&sum)); free(sum);
  T("  sum_f64 4 groups", rf_cpu_agg_sum_f64(pool,&g,c,&fs)); free(fs);
  rf_cpu_groups_free(&g);
  T("group 10M into 1M groups", rf_cpu_group(pool,&t,&c0,1,&g));
  T("  sum_f64 1M groups", rf_cpu_agg_sum_f64(pool,&g,c,&fs)); free(fs);
  rf_cpu_groups_free(&g);
  T("unique 10M rows (a,b) ~4M distinct", rf_cpu_unique(pool,&t,&p,&m)); free(p);
  rf_cpu_kind k1=RF_CPU_I64; rf_cpu_table r; rf_cpu_table_alloc(1,&k1,1000000,&r);
  for(int64_t i=0;i<1000000;i++) ((int64_t*)r.cols[0].data)[i]=i;
  int64_t*li,*ri;
  T("join 10M x 1M (pk) pairs", rf_cpu_hash_join(pool,&t,&c0,&r,&c0,1,&li,&ri,&m)); free(li); free(ri);
  T("semi 10M vs 1M", rf_cpu_semi_join(pool,&t,&c0,&r,&c0,1,&p,&m)); free(p);
  T("semi 1M vs 10M (build left)", rf_cpu_semi_join(pool,&r,&c0,&t,&c0,1,&p,&m)); free(p);
  for(int64_t i=0;i<1000000;i++) ((int64_t*)r.cols[0].data)[i]=(int64_t)(rnd()>>1);
  T("join 10M x 1M (random i64 keys, few hits)", rf_cpu_hash_join(pool,&t,&c0,&r,&c0,1,&li,&ri,&m)); free(li); free(ri);
  rf_cpu_table_free(&t); rf_cpu_table_free(&r); rf_cpu_pool_free(pool); return 0;}
