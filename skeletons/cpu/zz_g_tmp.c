#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "rf_cpu.h"
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static uint64_t s=88172645463325252ull; static uint64_t rnd(void){s^=s<<13;s^=s>>7;s^=s<<17;return s;}
int main(int argc,char**argv){
  int th=argc>1?atoi(argv[1]):1; int64_t n=10000000; int64_t dom = argc>2?atoll(argv[2]):1000000;
  rf_cpu_pool*pool; rf_cpu_pool_new(th,&pool);
  rf_cpu_kind k[1]={RF_CPU_I64}; rf_cpu_table t; rf_cpu_table_alloc(1,k,n,&t);
  int64_t*a=t.cols[0].data; for(int64_t i=0;i<n;i++){a[i]=rnd()%dom;}
  int32_t c0=0; rf_cpu_groups g;
  double t0=now(); rf_cpu_group(pool,&t,&c0,1,&g); printf("group %.3f s, %lld groups\n", now()-t0, (long long)g.ngroups);
  return 0;}
