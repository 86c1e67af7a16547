create or replace table mart.recent_clicks as
select d, count(*) as clicks from raw.clicks where d >= (select max(d) - 7 from raw.events) group by d;
