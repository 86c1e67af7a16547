update raw.sales set amount = amount + 100 where sale_date = '2025-06-10';
