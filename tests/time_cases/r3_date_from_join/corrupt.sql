update raw.payments set amount = amount + 500 where paid_date = '2026-01-20';
