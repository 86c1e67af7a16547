create or replace table mart.long as
with u as (select d, unnest(['a','b','c']) as metric, unnest([a, b, c]) as val from raw.wide)
select d, metric, val, sum(val) over (partition by metric order by d rows between 2 preceding and current row) as roll3 from u;
