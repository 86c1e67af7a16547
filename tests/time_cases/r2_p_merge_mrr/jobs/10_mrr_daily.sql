create table if not exists mart.mrr_daily (
  sub_id int not null, snapshot_date date not null, mrr numeric(10,2) not null,
  primary key (sub_id, snapshot_date)
);
merge into mart.mrr_daily t
using (
  with cal as (
    select g::date as d from generate_series(date '2024-01-01', date '2024-04-30', interval '1 day') g
  ), ev as (
    select sub_id, event_date, mrr,
           lead(event_date) over (partition by sub_id order by event_date) as next_event_date
    from raw.subscription_events
  )
  select ev.sub_id, cal.d as snapshot_date, ev.mrr
  from cal
  join ev on cal.d >= ev.event_date and (ev.next_event_date is null or cal.d < ev.next_event_date)
) s
on t.sub_id = s.sub_id and t.snapshot_date = s.snapshot_date
when matched and t.mrr <> s.mrr then update set mrr = s.mrr
when not matched then insert (sub_id, snapshot_date, mrr) values (s.sub_id, s.snapshot_date, s.mrr);
