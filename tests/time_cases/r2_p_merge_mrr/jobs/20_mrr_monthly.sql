drop table if exists mart.mrr_monthly;
create table mart.mrr_monthly as
select date_trunc('month', snapshot_date)::date as month_start, sum(mrr) as mrr_days, count(distinct sub_id) as active_subs
from mart.mrr_daily
group by 1;
