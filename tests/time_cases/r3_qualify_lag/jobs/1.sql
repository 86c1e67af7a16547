create or replace table mart.increases as
select d, user_id, amount from raw.events
qualify amount > lag(amount) over (partition by user_id order by d);
