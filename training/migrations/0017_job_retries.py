"""Automatic retries of failed jobs (training.models.JobRetry), one per first job and
attempt. Depends on 0016; the lead sets the dependency to the newest when merged."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('training', '0016_job_history_usage'),
    ]

    operations = [
        migrations.CreateModel(
            name='JobRetry',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('original_uid', models.CharField(max_length=64)),
                ('attempt', models.PositiveSmallIntegerField()),
                ('retries', models.PositiveSmallIntegerField()),
                ('namespace', models.CharField(max_length=253)),
                ('kind', models.CharField(max_length=63)),
                ('original', models.CharField(max_length=253)),
                ('failed', models.CharField(max_length=253)),
                ('failed_uid', models.CharField(max_length=64, unique=True)),
                ('name', models.CharField(max_length=253)),
                ('created_by', models.CharField(blank=True, max_length=253)),
                ('scenario', models.CharField(blank=True, max_length=63)),
                ('headline', models.CharField(blank=True, max_length=500)),
                ('spec', models.JSONField(default=dict)),
                ('due', models.DateTimeField()),
                ('state', models.CharField(choices=[('waiting', 'Waiting'), ('started', 'Started'), ('refused', 'Not started')], default='waiting', max_length=8)),
                ('claimed_until', models.DateTimeField(blank=True, null=True)),
                ('last_error', models.CharField(blank=True, max_length=1000)),
                ('created', models.DateTimeField(auto_now_add=True)),
                ('started', models.DateTimeField(blank=True, null=True)),
            ],
            options={
                'ordering': ['attempt', 'id'],
                'indexes': [models.Index(condition=models.Q(('state', 'waiting')), fields=['due'], name='job_retry_due_idx'), models.Index(fields=['namespace', 'kind', 'original'], name='training_jo_namespa_e64db4_idx')],
                'constraints': [models.UniqueConstraint(fields=('original_uid', 'attempt'), name='job_retry_once')],
            },
        ),
    ]
