create or replace table mart.kpi_daily as
with posted as (
  select invoice_date, amount from raw.invoices where status = 'posted'
), daily as (
  select invoice_date as d, sum(amount) as revenue, count(*) as invoices from posted group by 1
), mtd as (
  select d, revenue, invoices,
         sum(revenue) over (partition by date_trunc('month', d) order by d) as revenue_mtd
  from daily
), with_prior as (
  select cur.*, prev.revenue_mtd as prior_month_mtd
  from mtd cur left join mtd prev on prev.d = cur.d - interval 1 month
), final as (
  select d as kpi_date, revenue, invoices, revenue_mtd, prior_month_mtd,
         round(revenue_mtd / nullif(prior_month_mtd, 0) - 1, 4) as mtd_growth
  from with_prior
)
select * from final;
