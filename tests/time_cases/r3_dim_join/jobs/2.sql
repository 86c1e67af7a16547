create or replace table mart.region_7d as
select d, region, sum(amt) over (partition by region order by d range between interval 6 days preceding and current row) as amt7 from mart.region_day;
