create or replace table mart.retained as
select e.d, e.user_id, e.amount from raw.events e
where exists (select 1 from raw.events f where f.user_id = e.user_id and f.d > e.d and f.d <= e.d + 6)
  and not exists (select 1 from raw.events g where g.user_id = e.user_id and g.d < e.d and g.d >= e.d - 2);
